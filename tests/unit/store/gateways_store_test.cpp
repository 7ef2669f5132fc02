#include <gtest/gtest.h>

#include "sqlite_store.hpp"

namespace tollgate::store {
namespace {

using GatewaysStoreTest = test::SqliteStoreTest;

TEST_F(GatewaysStoreTest, AGatewayRecordsItsLeaseAndLagsUntilItsHeartbeatAppliesAChange) {
  db_->registerGateway({"gw-1", "host-a", 42, 0, 0, 700});
  const std::int64_t seq = db_->bumpChange();
  const std::vector<GatewayRecord> lagging = db_->laggingGateways(seq);
  ASSERT_EQ(lagging.size(), 1U);
  EXPECT_EQ(lagging[0].id, "gw-1");
  EXPECT_EQ(lagging[0].host, "host-a");
  EXPECT_EQ(lagging[0].pid, 42);
  EXPECT_EQ(lagging[0].lease_ms, 700);
  EXPECT_GE(lagging[0].silent_ms, 0);
  EXPECT_LT(lagging[0].silent_ms, 60'000) << "by the store's clock, since its registration";
  EXPECT_TRUE(db_->heartbeat("gw-1", seq));
  EXPECT_TRUE(db_->laggingGateways(seq).empty());
}

TEST_F(GatewaysStoreTest, AHeartbeatOfAForgottenGatewaySaysSoAndChangesNothing) {
  EXPECT_FALSE(db_->heartbeat("gone", 0));
  EXPECT_TRUE(db_->gatewaysOn("host-a").empty());
}

TEST_F(GatewaysStoreTest, TheLockedChangeSequenceIsTheChangeSequence) {
  const std::int64_t seq = db_->bumpChange();
  Transaction tx(db_->connection());
  EXPECT_EQ(db_->lockedChangeSeq(), seq);
  tx.commit();
  db_->endTransactionsIdleFor(std::chrono::milliseconds(500));  // Nothing on SQLite.
}

}  // namespace
}  // namespace tollgate::store
