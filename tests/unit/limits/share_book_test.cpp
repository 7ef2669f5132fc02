#include "limits/share_book.hpp"

#include <gtest/gtest.h>

#include "limits/limiter.hpp"

namespace tollgate::limits {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kWindow = 1'700'000'040'000;
constexpr std::int64_t kNext = kWindow + 60'000;

class ShareBookTest : public ::testing::Test {
 protected:
  ShareBook book_;
  ShareBook::Clock::time_point t0_ = ShareBook::Clock::now();
};

TEST_F(ShareBookTest, AShareIsTakenFromInMemoryUntilItRunsOut) {
  EXPECT_EQ(book_.takeUpTo("key:a:rpm", kWindow, 1, 0, t0_), 0);  // None yet: ask the store.
  // The store granted 4, one of them to the request that asked; 4 of 50 are taken in all.
  book_.granted("key:a:rpm", kWindow, {4, 1, 4, 50, kNext}, 0, t0_);
  EXPECT_EQ(book_.remaining("key:a:rpm", kWindow, 50), 49);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(book_.takeUpTo("key:a:rpm", kWindow, 1, 0, t0_), 1);
  }
  EXPECT_EQ(book_.takeUpTo("key:a:rpm", kWindow, 1, 0, t0_), 0);
  EXPECT_EQ(book_.remaining("key:a:rpm", kWindow, 50), 46);
}

TEST_F(ShareBookTest, AShareOfAPastWindowIsWorthNothing) {
  book_.granted("key:a:tpm", kWindow, {1000, 100, 1000, 5000, kNext}, 0, t0_);
  EXPECT_EQ(book_.takeUpTo("key:a:tpm", kNext, 10, 0, t0_), 0);
  // What a request of the past window gives back is owed to no one.
  EXPECT_FALSE(book_.give("key:a:tpm", kWindow, 50, 0));
  EXPECT_EQ(book_.remaining("key:a:tpm", kNext, 5000), 5000);
}

TEST_F(ShareBookTest, TokensGivenBackAreTakenAgainInTheSameWindow) {
  book_.granted("key:a:tpm", kWindow, {100, 100, 100, 100, kNext}, 0, t0_);
  EXPECT_EQ(book_.takeUpTo("key:a:tpm", kWindow, 60, 0, t0_), 0);
  EXPECT_TRUE(book_.give("key:a:tpm", kWindow, 70, 0));  // The request used 30 of its 100.
  EXPECT_EQ(book_.takeUpTo("key:a:tpm", kWindow, 60, 0, t0_), 60);
  // Less at hand than asked: what there is, the store asked for the rest.
  EXPECT_EQ(book_.takeUpTo("key:a:tpm", kWindow, 60, 0, t0_), 10);
}

TEST_F(ShareBookTest, AConcurrencyShareIsTrustedOnlyInTheEpochItWasGrantedIn) {
  book_.granted("key:a:concurrent", 0, {3, 1, 3, 10, 0}, 7, t0_);
  EXPECT_EQ(book_.takeUpTo("key:a:concurrent", 0, 1, 7, t0_), 1);
  // After a gap, its slots may have been given back for it: nothing is taken, nothing returned.
  EXPECT_EQ(book_.takeUpTo("key:a:concurrent", 0, 1, 8, t0_), 0);
  EXPECT_EQ(book_.takeUpTo("key:a:concurrent", 0, 1, std::nullopt, t0_), 0);
  book_.granted("key:a:concurrent", 0, {2, 1, 3, 10, 0}, 8, t0_);
  EXPECT_FALSE(book_.give("key:a:concurrent", 0, 1, 7));  // A slot of the old epoch.
  EXPECT_TRUE(book_.give("key:a:concurrent", 0, 1, 8));
}

TEST_F(ShareBookTest, IdleSharesGoBackAndPastWindowsAreForgotten) {
  book_.granted("key:a:rpm", kWindow, {5, 1, 5, 50, kNext}, 0, t0_);
  book_.granted("key:b:rpm", kWindow, {5, 1, 10, 50, kNext}, 0, t0_ + milliseconds(300));
  book_.granted("key:c:concurrent", 0, {2, 1, 2, 4, 0}, 0, t0_);
  auto unused = book_.takeIdle(t0_ + milliseconds(400), milliseconds(400), false, kWindow);
  ASSERT_EQ(unused.size(), 2U);  // a's and c's; b was used 100 ms ago.
  std::int64_t total = 0;
  for (const auto& u : unused) {
    total += u.amount;
  }
  EXPECT_EQ(total, 4 + 1);
  EXPECT_EQ(book_.takeIdle(t0_, milliseconds(400), true, kWindow).size(), 1U);  // Closing: b's.
  book_.granted("key:a:rpm", kWindow, {5, 1, 5, 50, kNext}, 0, t0_);
  // Its window ended: forgotten, nothing owed to the store. The concurrency share stays.
  EXPECT_TRUE(book_.takeIdle(t0_, milliseconds(0), true, kNext).empty());
  EXPECT_EQ(book_.remaining("key:a:rpm", kWindow, 50), 50);
}

TEST(RateLimitHeaders, EachKindReportsItsTightestLimitInOpenAIsFormat) {
  const std::vector<Standing> standings{
      {Kind::Requests, 600, 590, 42'001},  // 98 % left
      {Kind::Concurrent, 20, 19, 0},       // No header of its own.
      {Kind::Requests, 10, 3, 42'001},     // 30 % left: the tightest.
      {Kind::Tokens, 200'000, 150'000, 65'000},
  };
  const auto h = rateLimitHeaders(standings, false);
  const std::vector<std::pair<std::string, std::string>> want{
      {"x-ratelimit-limit-requests", "10"},       {"x-ratelimit-remaining-requests", "3"},
      {"x-ratelimit-reset-requests", "43s"},      {"x-ratelimit-limit-tokens", "200000"},
      {"x-ratelimit-remaining-tokens", "150000"}, {"x-ratelimit-reset-tokens", "1m5s"},
  };
  EXPECT_EQ(h, want);
  EXPECT_EQ(rateLimitHeaders(standings, true)[1].second, "0");
  EXPECT_TRUE(rateLimitHeaders({{Kind::Concurrent, 2, 0, 0}}, true).empty());
}

TEST(RateLimitHeaders, ResetIsWholeSecondsRoundedUpAtLeastOne) {
  EXPECT_EQ(resetText(0), "1s");
  EXPECT_EQ(resetText(1), "1s");
  EXPECT_EQ(resetText(59'000), "59s");
  EXPECT_EQ(resetText(59'001), "1m0s");
  EXPECT_EQ(resetText(60'000), "1m0s");
}

}  // namespace
}  // namespace tollgate::limits
