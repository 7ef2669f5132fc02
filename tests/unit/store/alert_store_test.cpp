// The alerts' outbox on SQLite: an event per threshold a settlement takes a balance below, in
// the settlement's transaction (its hold kept or reclaimed); thresholds re-armed by a top-up;
// leases that give each event to one gateway; attempts recorded; old events pruned.
#include "store/alert_store.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "sqlite_store.hpp"

namespace tollgate::store {
namespace {

constexpr std::int64_t kUsd = 1'000'000'000'000;
const std::vector<std::int64_t> kThresholds{50 * kUsd, 10 * kUsd, 0};

class AlertStoreTest : public test::SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    db_->topUp(team_, 60 * kUsd);
  }

  /// Holds then settles `cost` (pico-USD) in one request, with the fixture's thresholds.
  void spend(std::int64_t cost) {
    static int n = 0;
    const std::string hold_id = "h" + std::to_string(++n);
    ASSERT_TRUE(db_->hold({hold_id, team_, cost}, "gw", 0, 0, false).held);
    SpendRow row;
    row.request_id = "r" + std::to_string(n);
    row.created_at = nowMs();
    row.team_id = team_;
    row.endpoint = "chat";
    row.cost = cost;
    std::vector<Settlement> batch{{hold_id, row, false}};
    db_->settle(batch, kThresholds);
  }

  /// The thresholds of the events written, oldest first.
  std::vector<std::int64_t> fired() {
    std::vector<std::int64_t> out;
    const std::vector<AlertRow> rows = db_->listAlerts(team_, 100);
    for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
      out.push_back(it->threshold);
    }
    return out;
  }
};

TEST_F(AlertStoreTest, ASettlementThatCrossesAThresholdWritesOneEvent) {
  spend(5 * kUsd);  // 60 -> 55: above every threshold.
  EXPECT_TRUE(fired().empty());
  spend(5 * kUsd);  // 55 -> 50: at 50, not below it.
  EXPECT_TRUE(fired().empty());
  spend(1);  // 50 -> 49.999999999999
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd}));
  spend(kUsd);  // Below 50 already: it does not fire again.
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd}));
  const AlertRow e = db_->listAlerts(team_, 1).at(0);
  EXPECT_EQ(e.team, "acme");
  EXPECT_EQ(e.type, "balance.below");
  EXPECT_EQ(e.balance, 50 * kUsd - 1);
  EXPECT_EQ(e.attempts, 0);
  EXPECT_FALSE(e.delivered_at || e.failed_at || e.last_status);
}

TEST_F(AlertStoreTest, OneSettlementCrossingSeveralThresholdsWritesOneEventEach) {
  spend(60 * kUsd);  // 60 -> 0: below 50 and 10, and at 0.
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd, 10 * kUsd, 0}));
  const std::vector<AlertRow> rows = db_->listAlerts(team_, 100);
  EXPECT_NE(rows[0].id, rows[1].id);
  EXPECT_EQ(rows[0].balance, 0);
}

TEST_F(AlertStoreTest, ATopUpAboveAThresholdReArmsIt) {
  spend(45 * kUsd);  // 60 -> 15
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd}));
  db_->topUp(team_, 5 * kUsd);  // 20: still below 50, nothing to re-arm.
  spend(kUsd);                  // 19
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd}));
  db_->topUp(team_, 41 * kUsd);  // 60: above 50 again.
  spend(15 * kUsd);              // 45
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd, 50 * kUsd}));
}

TEST_F(AlertStoreTest, ASettlementWhoseHoldWasReclaimedFiresToo) {
  // Its hold is gone (reclaimed from a gateway taken for dead): what is available is debited.
  SpendRow row;
  row.request_id = "r";
  row.team_id = team_;
  row.cost = 15 * kUsd;
  std::vector<Settlement> batch{{"reclaimed", row, false}};
  EXPECT_EQ(db_->settle(batch, kThresholds), std::vector<SettleOutcome>{SettleOutcome::Reclaimed});
  EXPECT_EQ(fired(), (std::vector<std::int64_t>{50 * kUsd}));
  EXPECT_EQ(db_->listAlerts(team_, 1).at(0).balance, 45 * kUsd);
}

TEST_F(AlertStoreTest, NoThresholdsNoEvents) {
  ASSERT_TRUE(db_->hold({"h", team_, 60 * kUsd}, "gw", 0, 0, false).held);
  SpendRow row;
  row.request_id = "r";
  row.team_id = team_;
  row.cost = 60 * kUsd;
  std::vector<Settlement> batch{{"h", row, false}};
  db_->settle(batch);
  EXPECT_TRUE(fired().empty());
}

TEST_F(AlertStoreTest, AnEventIsLeasedToOneGatewayUntilItsLeaseRunsOut) {
  spend(15 * kUsd);  // 60 -> 45
  const std::int64_t now = nowMs();
  const std::vector<AlertRow> a = db_->leaseAlerts("gw-a", now, now + 60'000, 8);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_TRUE(db_->leaseAlerts("gw-b", now + 1, now + 60'000, 8).empty());
  // Gateway a stopped without a word: b takes the event once a's lease ran out.
  const std::vector<AlertRow> b = db_->leaseAlerts("gw-b", now + 60'000, now + 120'000, 8);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].id, a[0].id);
  EXPECT_FALSE(db_->recordAlertAttempt("gw-a", {a[0].id, 200, true, {}}, now))
      << "a's attempt is no longer its own to record";
  EXPECT_TRUE(db_->recordAlertAttempt("gw-b", {b[0].id, 200, true, {}}, now + 60'001));
  EXPECT_TRUE(db_->leaseAlerts("gw-a", now + 999'999, now + 9'999'999, 8).empty())
      << "a delivered event is never leased again";
  const AlertRow done = db_->listAlerts(team_, 1).at(0);
  EXPECT_EQ(done.delivered_at, now + 60'001);
  EXPECT_EQ(done.last_status, 200);
  EXPECT_EQ(done.attempts, 1);
}

TEST_F(AlertStoreTest, AFailedAttemptIsDueAgainLaterOrFailsForGood) {
  spend(15 * kUsd);
  const std::int64_t now = nowMs();
  const std::string id = db_->leaseAlerts("gw", now, now + 60'000, 8).at(0).id;
  EXPECT_TRUE(db_->recordAlertAttempt("gw", {id, 500, false, now + 1000}, now));
  EXPECT_TRUE(db_->leaseAlerts("gw", now + 999, now + 60'000, 8).empty()) << "not due yet";
  ASSERT_EQ(db_->leaseAlerts("gw", now + 1000, now + 60'000, 8).size(), 1u);
  EXPECT_TRUE(db_->recordAlertAttempt("gw", {id, std::nullopt, false, std::nullopt}, now + 1000));
  const AlertRow e = db_->listAlerts(team_, 1).at(0);
  EXPECT_EQ(e.attempts, 2);
  EXPECT_EQ(e.failed_at, now + 1000);
  EXPECT_FALSE(e.last_status.has_value());
  EXPECT_TRUE(db_->leaseAlerts("gw", now + 9'999'999, now + 99'999'999, 8).empty());
}

TEST_F(AlertStoreTest, OldEventsArePruned) {
  spend(15 * kUsd);
  const std::int64_t created = db_->listAlerts(team_, 1).at(0).created_at;
  EXPECT_EQ(db_->pruneAlerts(created), 0);
  EXPECT_EQ(db_->pruneAlerts(created + 1), 1);
  EXPECT_TRUE(db_->listAlerts("", 10).empty());
}

}  // namespace
}  // namespace tollgate::store
