// The anonymous sign-in failures a gateway counts in memory: a source is refused after 30 in a
// window of a minute (others are not), a success starts its count again, a summary is handed out
// at most once a minute with the busiest sources first, and the sources tracked are bounded.
#include "accounts/sign_in_guard.hpp"

#include <gtest/gtest.h>

namespace tollgate::accounts {
namespace {

using Clock = SignInGuard::Clock;
using std::chrono::seconds;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1000);

void fail(SignInGuard& g, const std::string& source, int n, Clock::time_point at = t0) {
  for (int i = 0; i < n; ++i) {
    g.failed(source, at);
  }
}

TEST(SignInGuard, ASourceIsRefusedAfter30FailuresUntilItsMinuteEnds) {
  SignInGuard g;
  fail(g, "10.0.0.1", 29);
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0), seconds::zero());
  fail(g, "10.0.0.1", 1, t0 + seconds(10));
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0 + seconds(10)), seconds(50));
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0 + seconds(59) + std::chrono::milliseconds(1)), seconds(1))
      << "rounded up";
  EXPECT_EQ(g.throttledFor("10.0.0.2", t0 + seconds(10)), seconds::zero());
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0 + seconds(60)), seconds::zero());
  fail(g, "10.0.0.1", 1, t0 + seconds(61));
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0 + seconds(61)), seconds::zero())
      << "a new window counts from zero";
}

TEST(SignInGuard, ASuccessStartsTheCountAgain) {
  SignInGuard g;
  fail(g, "10.0.0.1", 30);
  ASSERT_GT(g.throttledFor("10.0.0.1", t0), seconds::zero());
  g.succeeded("10.0.0.1");
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0), seconds::zero());
  fail(g, "10.0.0.1", 29);
  EXPECT_EQ(g.throttledFor("10.0.0.1", t0), seconds::zero());
}

TEST(SignInGuard, ASummaryIsHandedOutAtMostOnceAMinuteBusiestFirst) {
  SignInGuard g;
  EXPECT_FALSE(g.takeSummary(t0)) << "nothing failed";
  fail(g, "10.0.0.1", 1);
  const auto first = g.takeSummary(t0);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->count, 1);
  EXPECT_EQ(describe(*first), "1 failed sign-in; busiest sources: 10.0.0.1 (1)");
  for (int i = 0; i < 12; ++i) {
    fail(g, "10.1.0." + std::to_string(i), i + 1, t0 + seconds(1));
  }
  EXPECT_FALSE(g.takeSummary(t0 + seconds(59))) << "within the minute";
  const auto next = g.takeSummary(t0 + seconds(60));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->count, 78);
  ASSERT_EQ(next->busiest.size(), SignInGuard::kBusiestShown);
  EXPECT_EQ(next->busiest.front(), (std::pair<std::string, std::int64_t>{"10.1.0.11", 12}));
  EXPECT_EQ(next->busiest.back(), (std::pair<std::string, std::int64_t>{"10.1.0.2", 3}));
  EXPECT_FALSE(g.takeSummary(t0 + seconds(200))) << "handed out once";
}

TEST(SignInGuard, TheSourcesTrackedAreBoundedAndAThrottledOneStays) {
  SignInGuard g;
  fail(g, "busy", 30);
  for (std::size_t i = 0; i < SignInGuard::kMaxSources + 100; ++i) {
    g.failed("s" + std::to_string(i), t0);
  }
  EXPECT_GT(g.throttledFor("busy", t0), seconds::zero())
      << "the fewest failures are forgotten first";
  const auto summary = g.takeSummary(t0);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->count, 30 + static_cast<std::int64_t>(SignInGuard::kMaxSources) + 100)
      << "every failure is counted, though not every source is named";
}

}  // namespace
}  // namespace tollgate::accounts
