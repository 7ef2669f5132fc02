#include "billing/pricing.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tollgate::billing {
namespace {

config::Model priced(const char* input, const char* output) {
  config::Model m;
  m.id = "m";
  m.input_cost_per_token = *money::parseUsd(input);
  m.output_cost_per_token = *money::parseUsd(output);
  return m;
}

TEST(ChatBound, PromptIsTheBodySizeCappedByTheModelsInputLimit) {
  config::Model m = priced("0", "0");
  EXPECT_EQ(chatBound(2048, 0, std::nullopt, m).prompt, 2048);
  m.max_input_tokens = 1000;
  EXPECT_EQ(chatBound(2048, 0, std::nullopt, m).prompt, 1000);
  EXPECT_EQ(chatBound(10, 0, std::nullopt, m).prompt, 10);
}

TEST(ChatBound, EachPartThatIsNotTextAddsItsOwnBoundWithinTheInputLimit) {
  config::Model m = priced("0", "0");
  EXPECT_EQ(chatBound(200, 2, std::nullopt, m).prompt, 200 + 2 * kMediaPartTokens);
  m.max_input_tokens = 50'000;
  EXPECT_EQ(chatBound(200, 2, std::nullopt, m).prompt, 50'000);
}

TEST(ChatBound, CompletionIsTheSmallestLimitSet) {
  config::Model m = priced("0", "0");
  EXPECT_EQ(chatBound(1, 0, std::nullopt, m).completion, kDefaultOutputBound);
  EXPECT_EQ(chatBound(1, 0, 10, m).completion, 10);
  EXPECT_EQ(chatBound(1, 0, 0, m).completion, 0);
  m.max_output_tokens = 500;
  EXPECT_EQ(chatBound(1, 0, std::nullopt, m).completion, 500);
  EXPECT_EQ(chatBound(1, 0, 100, m).completion, 100);
  EXPECT_EQ(chatBound(1, 0, 100'000, m).completion, 500);
}

TEST(MaxCost, ExactAtTheSmallestPrices) {
  const config::Model m = priced("0.000000000001", "0.000000075");
  // 3 x 1 pico + 7 x 75,000 pico
  EXPECT_EQ(maxCost({3, 7}, m), 3 + 7 * 75'000);
  EXPECT_EQ(money::formatUsd(*maxCost({1'000'000, 0}, m)), "0.000001");
}

TEST(MaxCost, OverflowIsNoCost) {
  const config::Model m = priced("1000", "1000");
  EXPECT_FALSE(maxCost({std::numeric_limits<std::int64_t>::max() / 2, 1}, m).has_value());
  EXPECT_FALSE(maxCost({1, std::numeric_limits<std::int64_t>::max()}, m).has_value());
}

TEST(EstimateTokens, OnePerFourBytesRoundedUp) {
  EXPECT_EQ(estimateTokens(0), 0);
  EXPECT_EQ(estimateTokens(1), 1);
  EXPECT_EQ(estimateTokens(4), 1);
  EXPECT_EQ(estimateTokens(5), 2);
}

TEST(Charge, PricesTimesUsageCappedAtTheHold) {
  const money::Pricing p{*money::parseUsd("0.00000015"), *money::parseUsd("0.0000006"), 1'000'000};
  EXPECT_EQ(money::charge(p, 2, 1), 2 * 150'000 + 600'000);
  EXPECT_EQ(money::charge(p, 10, 10), 1'000'000);  // 7,500,000 capped
  EXPECT_EQ(money::charge(p, 0, 0), 0);
  EXPECT_EQ(money::charge(p, std::numeric_limits<std::int64_t>::max(), 1), 1'000'000);
}

}  // namespace
}  // namespace tollgate::billing
