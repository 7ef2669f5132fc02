#include "core/prices.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace tollgate::money {
namespace {

Pico usd(const char* text) { return *parseUsd(text); }

/// Claude Sonnet's published prices: $3 in, $15 out per million; cache reads 0.1x, 5-minute
/// writes 1.25x, 1-hour writes 2x; above 200k input tokens $6 in and $22.50 out.
Prices sonnet() {
  Prices p;
  p.base = Rates{usd("0.000003"),   usd("0.000015"), usd("0.0000003"),
                 usd("0.00000375"), usd("0.000006"), 0,
                 usd("0.000015")};
  Rates above = Rates{usd("0.000006"),  usd("0.0000225"), usd("0.0000006"),
                      usd("0.0000075"), usd("0.000012"),  0,
                      usd("0.0000225")};
  p.tiers.push_back(Tier{200'000, above});
  return p;
}

usage::Counts counts(std::int64_t prompt, std::int64_t completion) {
  return usage::of(prompt, completion);
}

TEST(Charge, EachKindAtItsOwnPriceExactly) {
  const Prices p = sonnet();
  usage::Counts u = counts(10'000, 500);
  u.cached_tokens = 8'000;
  u.cache_write_tokens = 1'500;
  u.cache_write_1h_tokens = 500;
  u.reasoning_tokens = 200;  // Part of the completion, priced as output.
  // 500 uncached x 3 + 8,000 x 0.3 + 1,000 x 3.75 + 500 x 6 + 500 out x 15 (micro-USD):
  // 1,500 + 2,400 + 3,750 + 3,000 + 7,500.
  const Pico want = 500 * usd("0.000003") + 8'000 * usd("0.0000003") + 1'000 * usd("0.00000375") +
                    500 * usd("0.000006") + 500 * usd("0.000015");
  EXPECT_EQ(charge(Pricing{&p, kPicoPerUsd}, u), want);
  EXPECT_EQ(formatUsd(want), "0.01815");
}

TEST(Charge, AudioAtTheAudioPrices) {
  Prices p;
  p.base = Rates{usd("0.0000025"), usd("0.00001"), usd("0.0000025"), usd("0.0000025"),
                 usd("0.0000025"), usd("0.00004"), usd("0.00008")};
  p.input_audio = true;
  usage::Counts u = counts(1'000, 300);
  u.audio_prompt_tokens = 400;
  u.audio_completion_tokens = 100;
  EXPECT_EQ(charge(Pricing{&p, kPicoPerUsd}, u), 600 * usd("0.0000025") + 400 * usd("0.00004") +
                                                     200 * usd("0.00001") + 100 * usd("0.00008"));
}

TEST(Charge, TheTierStrictlyAboveItsThresholdPricesEveryToken) {
  const Prices p = sonnet();
  const Pricing at{&p, std::numeric_limits<Pico>::max()};
  EXPECT_EQ(charge(at, counts(200'000, 10)), 200'000 * usd("0.000003") + 10 * usd("0.000015"));
  EXPECT_EQ(charge(at, counts(200'001, 10)), 200'001 * usd("0.000006") + 10 * usd("0.0000225"));
  // Input counts every kind: cache reads push a request into the tier too.
  usage::Counts u = counts(200'001, 0);
  u.cached_tokens = 200'000;
  EXPECT_EQ(charge(at, u), 1 * usd("0.000006") + 200'000 * usd("0.0000006"));
}

TEST(Charge, TheHighestTierReachedApplies) {
  Prices p = sonnet();
  Tier top = p.tiers.back();
  top.above_input_tokens = 500'000;
  top.rates.input = usd("0.00001");
  p.tiers.push_back(top);
  EXPECT_EQ(charge(Pricing{&p, std::numeric_limits<Pico>::max()}, counts(600'000, 0)),
            600'000 * usd("0.00001"));
  EXPECT_EQ(&p.ratesFor(300'000), &p.tiers[0].rates);
  EXPECT_EQ(&p.ratesFor(0), &p.base);
}

TEST(Charge, CappedAtTheHoldAndOnOverflow) {
  const Prices p = sonnet();
  EXPECT_EQ(charge(Pricing{&p, 1'000}, counts(10, 10)), 1'000);
  EXPECT_EQ(charge(Pricing{&p, 5'000}, counts(std::numeric_limits<std::int64_t>::max(), 1)), 5'000);
  EXPECT_EQ(charge(Pricing{nullptr, 5'000}, counts(10, 10)), 0);
}

TEST(Charge, KindsThatDoNotFitArePricedAtTheDearestKind) {
  const Prices p = sonnet();
  const Pricing at{&p, kPicoPerUsd};
  usage::Counts lying = counts(100, 10);
  lying.cached_tokens = 101;  // More reads than input: not to be priced at the read price.
  EXPECT_FALSE(usage::consistent(lying));
  EXPECT_EQ(charge(at, lying), 100 * usd("0.000006") + 10 * usd("0.000015"));
  usage::Counts split = counts(100, 10);
  split.cached_tokens = 60;
  split.cache_write_tokens = 41;
  EXPECT_FALSE(usage::consistent(split));
  usage::Counts hour = counts(100, 10);
  hour.cache_write_tokens = 10;
  hour.cache_write_1h_tokens = 11;
  EXPECT_FALSE(usage::consistent(hour));
  usage::Counts reasoning = counts(100, 10);
  reasoning.reasoning_tokens = 11;
  EXPECT_FALSE(usage::consistent(reasoning));
  reasoning.reasoning_tokens = 10;
  EXPECT_TRUE(usage::consistent(reasoning));
  // Parts whose sum overflows never pass for parts that fit, even under the largest total.
  usage::Counts overflowing = counts(std::numeric_limits<std::int64_t>::max(), 0);
  overflowing.cached_tokens = std::numeric_limits<std::int64_t>::max();
  overflowing.audio_prompt_tokens = 1;
  EXPECT_FALSE(usage::consistent(overflowing));
  usage::Counts negative = counts(100, 10);
  negative.cached_tokens = -1;
  EXPECT_FALSE(usage::consistent(negative));
}

TEST(MaxCharge, TheDearestKindOfTheDearestReachableTier) {
  const Prices p = sonnet();
  // Within 200k tokens, the tier is out of reach: every token at the 1-hour write price.
  EXPECT_EQ(maxCharge(p, 200'000, 100), 200'000 * usd("0.000006") + 100 * usd("0.000015"));
  EXPECT_EQ(maxCharge(p, 200'001, 100), 200'001 * usd("0.000012") + 100 * usd("0.0000225"));
  EXPECT_FALSE(maxCharge(p, std::numeric_limits<std::int64_t>::max(), 1).has_value());
}

TEST(MaxCharge, AudioCountsOnlyWhenTheModelTakesIt) {
  Prices p;
  p.base = Rates{1, 1, 1, 1, 1, 50, 1};
  EXPECT_EQ(maxCharge(p, 10, 0), 10);
  p.input_audio = true;
  EXPECT_EQ(maxCharge(p, 10, 0), 500);
}

// For any usage within a request's bound, under any tier and any split between kinds, the
// charge is the sum of each kind at its price and never more than the hold.
TEST(Charge, PropertyWithinTheBoundTheChargeIsThePricedUsageAndNeverAboveTheHold) {
  std::mt19937_64 rng(20261126);
  const auto below = [&rng](std::int64_t n) {
    return n <= 0 ? 0 : std::uniform_int_distribution<std::int64_t>(0, n)(rng);
  };
  Prices p = sonnet();
  p.input_audio = true;
  p.base.input_audio = usd("0.00001");
  p.tiers[0].rates.input_audio = usd("0.00002");
  p.tiers[0].rates.cache_write_1h = usd("0.00005");  // Dearer in the tier than anything else.
  for (int i = 0; i < 20'000; ++i) {
    const std::int64_t bound_prompt = below(400'000);
    const std::int64_t bound_completion = below(64'000);
    const auto hold = maxCharge(p, bound_prompt, bound_completion);
    ASSERT_TRUE(hold.has_value());
    usage::Counts u = counts(below(bound_prompt), below(bound_completion));
    u.cached_tokens = below(u.prompt_tokens);
    u.cache_write_tokens = below(u.prompt_tokens - u.cached_tokens);
    u.cache_write_1h_tokens = below(u.cache_write_tokens);
    u.audio_prompt_tokens = below(u.prompt_tokens - u.cached_tokens - u.cache_write_tokens);
    u.reasoning_tokens = below(u.completion_tokens);
    u.audio_completion_tokens = below(u.completion_tokens - u.reasoning_tokens);
    ASSERT_TRUE(usage::consistent(u));
    const Rates& r = u.prompt_tokens > 200'000 ? p.tiers[0].rates : p.base;
    const Pico priced =
        (u.prompt_tokens - u.cached_tokens - u.cache_write_tokens - u.audio_prompt_tokens) *
            r.input +
        u.cached_tokens * r.cached_input +
        (u.cache_write_tokens - u.cache_write_1h_tokens) * r.cache_write +
        u.cache_write_1h_tokens * r.cache_write_1h + u.audio_prompt_tokens * r.input_audio +
        (u.completion_tokens - u.audio_completion_tokens) * r.output +
        u.audio_completion_tokens * r.output_audio;
    ASSERT_LE(priced, *hold) << i;
    ASSERT_EQ(charge(Pricing{&p, *hold}, u), priced) << i;
    // Inconsistent counts (the same totals, a lying split) are never charged above the hold.
    usage::Counts lying = u;
    lying.cached_tokens = u.prompt_tokens + 1;
    ASSERT_LE(charge(Pricing{&p, *hold}, lying), *hold);
  }
}

}  // namespace
}  // namespace tollgate::money
