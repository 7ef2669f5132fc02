// Variant choice, backoff and Retry-After, and the circuit breaker's states.
#include <gtest/gtest.h>

#include <map>

#include "routing/backoff.hpp"
#include "routing/breaker.hpp"
#include "routing/variants.hpp"

namespace tollgate::routing {
namespace {

using namespace std::chrono_literals;

config::Function function() {
  config::Function f;
  f.name = "support_bot";
  for (const auto& [name, weight] :
       {std::pair{"a", 0.75}, std::pair{"b", 0.25}, std::pair{"c", 0.0}, std::pair{"d", 0.0}}) {
    config::Variant v;
    v.name = name;
    v.model = "m";
    v.weight = weight;
    f.variants.push_back(v);
  }
  f.fallback_variants = {"d", "a"};
  return f;
}

std::vector<std::string> names(const std::vector<const config::Variant*>& order) {
  std::vector<std::string> out;
  for (const auto* v : order) {
    out.push_back(v->name);
  }
  return out;
}

TEST(VariantOrder, CandidatesByWeightThenFallbacksInOrderEachOnce) {
  const auto f = function();
  for (const char* episode : {"e1", "e2", "e3", "0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b"}) {
    const auto order = names(variantOrder(f, episode));
    ASSERT_EQ(order.size(), 3U) << episode;
    // a and b (the weighted candidates) in some order, then d; a is not listed twice and c
    // (weight 0, no fallback) is never tried.
    EXPECT_EQ(order[2], "d") << episode;
    EXPECT_TRUE((order[0] == "a" && order[1] == "b") || (order[0] == "b" && order[1] == "a"));
  }
}

TEST(VariantOrder, TheSameEpisodeAlwaysGetsTheSameOrder) {
  const auto f = function();
  for (int i = 0; i < 50; ++i) {
    const std::string episode = "episode-" + std::to_string(i);
    EXPECT_EQ(names(variantOrder(f, episode)), names(variantOrder(f, episode)));
  }
}

TEST(VariantOrder, FirstChoicesFollowTheWeights) {
  const auto f = function();
  std::map<std::string, int> first;
  constexpr int kEpisodes = 4000;
  for (int i = 0; i < kEpisodes; ++i) {
    ++first[names(variantOrder(f, "ep-" + std::to_string(i)))[0]];
  }
  EXPECT_EQ(first.size(), 2U);
  // 3000 expected for a; the bound is over 6 standard deviations (about 27 each way).
  EXPECT_NEAR(first["a"], 3000, 170);
  EXPECT_NEAR(first["b"], 1000, 170);
}

TEST(VariantOrder, TheSameEpisodeDrawsIndependentlyForAnotherFunction) {
  auto f = function();
  auto g = function();
  g.name = "other";
  int differ = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string episode = "ep-" + std::to_string(i);
    differ += names(variantOrder(f, episode)) != names(variantOrder(g, episode)) ? 1 : 0;
  }
  EXPECT_GT(differ, 20);
}

TEST(Backoff, FullJitterUnderADoublingCeilingCappedByTheMaxDelay) {
  EXPECT_EQ(backoff(0, 10s, 0.0), 0ms);
  EXPECT_EQ(backoff(0, 10s, 0.5), 50ms);
  EXPECT_EQ(backoff(1, 10s, 0.5), 100ms);
  EXPECT_EQ(backoff(3, 10s, 0.999), 799ms);
  EXPECT_EQ(backoff(20, 10s, 0.5), 5s);
  EXPECT_EQ(backoff(1000, 2s, 1.0), 2s);  // No overflow for absurd retry counts.
  EXPECT_EQ(backoff(0, 10s, 7.0), 100ms);
}

TEST(Backoff, RetryAfterIsHonouredWhenLongerAndRefusedPastTheMaxDelay) {
  EXPECT_EQ(retryDelay(0, 10s, 3s, 0.5), std::optional(Millis(3s)));
  EXPECT_EQ(retryDelay(0, 10s, 1ms, 0.5), std::optional(50ms));
  EXPECT_EQ(retryDelay(0, 10s, std::nullopt, 0.5), std::optional(50ms));
  EXPECT_EQ(retryDelay(0, 2s, 3s, 0.5), std::nullopt);
}

TEST(RetryAfter, DelaySecondsAndHttpDates) {
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // 1994-11-06 08:49:37
  EXPECT_EQ(parseRetryAfter("120", now), std::optional(Millis(120s)));
  EXPECT_EQ(parseRetryAfter(" 0 ", now), std::optional(0ms));
  EXPECT_EQ(parseRetryAfter("99999999999999999999", now), std::optional(Millis(24h)));
  EXPECT_EQ(parseRetryAfter("Sun, 06 Nov 1994 08:49:47 GMT", now), std::optional(Millis(10s)));
  EXPECT_EQ(parseRetryAfter("Sun, 06 Nov 1994 08:49:00 GMT", now), std::optional(0ms));
  EXPECT_EQ(parseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", now), std::optional(Millis(24h)));
  for (std::string_view bad :
       {"", "-1", "1.5", "soon", "Sun, 06 Nov 1994 08:49:47 UTC", "Sun, 06 Foo 1994 08:49:47 GMT",
        "Sun, 36 Nov 1994 08:49:47 GMT", "Sunday, 06-Nov-94 08:49:37 GMT"}) {
    EXPECT_EQ(parseRetryAfter(bad, now), std::nullopt) << bad;
  }
}

TEST(CircuitBreaker, OpensAfterConsecutiveFailuresThenProbesOnce) {
  CircuitBreaker b(config::BreakerPolicy{3, 10s});
  const auto t0 = CircuitBreaker::Clock::now();
  b.failed(t0);
  b.failed(t0);
  b.succeeded();  // Not consecutive: the count starts again.
  b.failed(t0);
  b.failed(t0);
  EXPECT_TRUE(b.allow(t0));
  b.failed(t0);
  EXPECT_EQ(b.snapshot(t0).state, CircuitBreaker::State::Open);
  EXPECT_FALSE(b.allow(t0 + 9s));
  EXPECT_EQ(b.snapshot(t0 + 4s).open_for, 6s);
  // The cooldown is over: one probe, and nobody else until its outcome.
  EXPECT_TRUE(b.allow(t0 + 10s));
  EXPECT_EQ(b.snapshot(t0 + 10s).state, CircuitBreaker::State::HalfOpen);
  EXPECT_FALSE(b.allow(t0 + 10s));
  // The probe fails: open for another cooldown.
  b.failed(t0 + 11s);
  EXPECT_FALSE(b.allow(t0 + 20s));
  EXPECT_TRUE(b.allow(t0 + 21s));
  // This probe succeeds: closed.
  b.succeeded();
  EXPECT_EQ(b.snapshot(t0 + 21s).state, CircuitBreaker::State::Closed);
  EXPECT_TRUE(b.allow(t0 + 21s));
  EXPECT_TRUE(b.allow(t0 + 21s));
}

TEST(CircuitBreaker, AnAbandonedProbeGivesItsTurnBack) {
  CircuitBreaker b(config::BreakerPolicy{1, 1s});
  const auto t0 = CircuitBreaker::Clock::now();
  b.failed(t0);
  EXPECT_TRUE(b.allow(t0 + 1s));
  EXPECT_FALSE(b.allow(t0 + 1s));
  b.abandoned();
  EXPECT_TRUE(b.allow(t0 + 1s));
}

TEST(CircuitBreaker, ZeroFailuresNeverOpens) {
  CircuitBreaker b(config::BreakerPolicy{0, 1s});
  const auto t0 = CircuitBreaker::Clock::now();
  for (int i = 0; i < 100; ++i) {
    b.failed(t0);
  }
  EXPECT_TRUE(b.allow(t0));
  EXPECT_EQ(b.snapshot(t0).consecutive_failures, 100);
}

TEST(Breakers, OnePerConfiguredProviderWithItsStatus) {
  const auto c = config::parseConfig(R"(
[models.m]
routing = ["a", "b"]
[models.m.providers.a]
type = "dummy"
circuit_breaker = { failures = 1, cooldown_ms = 5000 }
[models.m.providers.b]
type = "dummy"
)",
                                     "t.toml");
  const Breakers breakers(c);
  const auto now = CircuitBreaker::Clock::now();
  breakers.of(c.models[0], c.models[0].providers[0])->failed(now);
  EXPECT_EQ(breakers.statusJson(c, now),
            R"([{"model":"m","provider":"a","state":"open","consecutive_failures":1,)"
            R"("open_for_ms":5000},{"model":"m","provider":"b","state":"closed",)"
            R"("consecutive_failures":0,"open_for_ms":0}])");
}

}  // namespace
}  // namespace tollgate::routing
