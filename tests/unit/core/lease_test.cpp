#include "core/lease.hpp"

#include <gtest/gtest.h>

namespace tollgate {
namespace {

using Clock = Lease::Clock;
using std::chrono::milliseconds;

/// A fake clock: every time is t0 plus a duration the test chooses.
const Clock::time_point t0 = Clock::time_point(std::chrono::hours(1000));

TEST(LeaseTest, NeverRenewedItDoesNotHold) {
  const Lease lease(milliseconds(2'000));
  EXPECT_FALSE(lease.holds(t0));
  EXPECT_FALSE(lease.trusted(t0));
}

TEST(LeaseTest, HoldsForItsLengthFromTheStartOfTheLastHeartbeat) {
  Lease lease(milliseconds(2'000));
  // Began at t0, committed 300 ms later: the lease counts from the start.
  lease.renew(t0, t0 + milliseconds(300));
  EXPECT_TRUE(lease.holds(t0 + milliseconds(300)));
  EXPECT_TRUE(lease.holds(t0 + milliseconds(1'999)));
  EXPECT_FALSE(lease.holds(t0 + milliseconds(2'000)));
  EXPECT_FALSE(lease.trusted(t0 + milliseconds(2'000)));
  // Heartbeats every quarter of it keep it held.
  lease.renew(t0 + milliseconds(500), t0 + milliseconds(510));
  EXPECT_TRUE(lease.holds(t0 + milliseconds(2'499)));
  EXPECT_FALSE(lease.holds(t0 + milliseconds(2'500)));
}

TEST(LeaseTest, AHeartbeatBegunBeforeAGapDoesNotEndIt) {
  Lease lease(milliseconds(2'000));
  lease.renew(t0, t0);
  // Stopped mid-heartbeat for 30 s: the heartbeat commits on resume, but it began before the
  // gap, so the gateway stays fenced until one begun after the gap commits.
  lease.renew(t0 + milliseconds(400), t0 + milliseconds(30'000));
  EXPECT_FALSE(lease.holds(t0 + milliseconds(30'000)));
  lease.renew(t0 + milliseconds(30'010), t0 + milliseconds(30'020));
  EXPECT_TRUE(lease.holds(t0 + milliseconds(30'020)));
}

TEST(LeaseTest, AGapBetweenHeartbeatsStartsANewEpochAndLateOnesAreNotTrusted) {
  Lease lease(milliseconds(5'000));
  lease.renew(t0, t0);
  const auto first = lease.trusted(t0);
  ASSERT_TRUE(first);
  lease.renew(t0 + std::chrono::seconds(1), t0 + std::chrono::seconds(2));
  EXPECT_EQ(lease.trusted(t0 + std::chrono::seconds(3)), first) << "beats a second apart";
  EXPECT_FALSE(lease.trusted(t0 + std::chrono::seconds(6))) << "the last began 5 s before";
  // A heartbeat that began in time but committed late is a gap too.
  lease.renew(t0 + std::chrono::seconds(3), t0 + std::chrono::seconds(9));
  const auto second = lease.trusted(t0 + std::chrono::seconds(4));
  ASSERT_TRUE(second);
  EXPECT_NE(*second, *first);
}

TEST(LeaseTest, EveryLeaseRunsOutBeforeItsGatewayIsTakenForDead) {
  // The longest lease the configuration takes, plus the control plane's second of margin.
  EXPECT_LT(milliseconds(8'000) + milliseconds(1'000), Lease::kDeadAfter);
}

}  // namespace
}  // namespace tollgate
