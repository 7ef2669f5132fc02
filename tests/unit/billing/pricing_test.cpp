#include "billing/pricing.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tollgate::billing {
namespace {

config::Model priced(const char* input, const char* output) {
  config::Model m;
  m.id = "m";
  m.prices = money::flatPrices(*money::parseUsd(input), *money::parseUsd(output));
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
  EXPECT_EQ(chatBound(1, 0, std::nullopt, m).completion, config::kDefaultMaxTokens);
  EXPECT_EQ(chatBound(1, 0, 10, m).completion, 10);
  EXPECT_EQ(chatBound(1, 0, 0, m).completion, 0);
  m.max_output_tokens = 500;
  EXPECT_EQ(chatBound(1, 0, std::nullopt, m).completion, 500);
  EXPECT_EQ(chatBound(1, 0, 100, m).completion, 100);
  EXPECT_EQ(chatBound(1, 0, 100'000, m).completion, 500);
  m.default_max_tokens = 50;
  EXPECT_EQ(chatBound(1, 0, std::nullopt, m).completion, 50);
  EXPECT_EQ(chatBound(1, 0, 400, m).completion, 400);
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

TEST(UnpricedAudio, InputAudioNeedsAnInputAudioPrice) {
  config::Model m = priced("1", "1");
  EXPECT_FALSE(unpricedAudio(0, false, m).has_value());
  const auto refused = unpricedAudio(1, false, m);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->kind, ErrorKind::InvalidValue);
  EXPECT_EQ(refused->param, "messages");
  m.prices.input_audio = true;
  EXPECT_FALSE(unpricedAudio(3, false, m).has_value());
}

TEST(UnpricedAudio, AudioOutputNeedsAnOutputAudioPrice) {
  config::Model m = priced("1", "1");
  const auto refused = unpricedAudio(0, true, m);
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->param, "modalities");
  m.prices.has_output_audio = true;
  EXPECT_FALSE(unpricedAudio(0, true, m).has_value());
}

TEST(MaxCost, TheDearestInputKindBoundsEveryPromptToken) {
  config::Model m = priced("0.000003", "0.000015");
  m.prices.base.cache_write_1h = *money::parseUsd("0.000006");  // 2x input
  EXPECT_EQ(maxCost({1000, 10}, m), std::int64_t{1000} * 6'000'000 + 10 * 15'000'000);
}

TEST(EmbeddingBound, TheBodyCappedByTheInputLimitOfEachInput) {
  config::Model m = priced("0", "0");
  EXPECT_EQ(embeddingBound(1000, 3, m).prompt, 1000);
  EXPECT_EQ(embeddingBound(1000, 3, m).completion, 0);
  m.max_input_tokens = 100;
  EXPECT_EQ(embeddingBound(1000, 3, m).prompt, 300);
  EXPECT_EQ(embeddingBound(1000, 1, m).prompt, 100);
  EXPECT_EQ(embeddingBound(250, 3, m).prompt, 250);
  EXPECT_EQ(embeddingBound(1000, 2048, m).prompt, 1000);
  EXPECT_EQ(embeddingBound(1000, 3, m).completion, 0);
}

TEST(RerankBound, TheBodyAndTheQueryOncePerDocument) {
  EXPECT_EQ(rerankBound(1000, 10, 50).prompt, 1000 + 10 * 50);
  EXPECT_EQ(rerankBound(1000, 10, 50).completion, 0);
  EXPECT_EQ(rerankBound(1000, 10, 0).prompt, 1000);
  EXPECT_EQ(rerankBound(0, 0, 0).prompt, 0);
  // The largest body and documents the gateway accepts do not overflow.
  EXPECT_EQ(rerankBound(std::size_t{1} << 31, std::size_t{1} << 31, 10'000).prompt,
            (std::int64_t{1} << 31) * 10'001);
}

TEST(AudioBoundMs, ThePlainWavDurationWhenKnown) {
  EXPECT_EQ(audioBoundMs(1234, 3600), 1234);
  EXPECT_EQ(audioBoundMs(0, 3600), 0);
}

TEST(AudioBoundMs, ElseTheModelsMaximum) {
  EXPECT_EQ(audioBoundMs(std::nullopt, 3600), 3'600'000);
  EXPECT_EQ(audioBoundMs(std::nullopt, 1), 1000);
  // The largest max_audio_seconds the configuration takes does not overflow.
  EXPECT_EQ(audioBoundMs(std::nullopt, 2'147'483'647), 2'147'483'647'000);
}

TEST(AudioCost, PerSecondWithPartialSecondsRoundedUp) {
  struct Case {
    std::int64_t ms;
    money::Pico per_second;
    money::Pico cost;
  };
  const money::Pico whisper = *money::parseUsd("0.0001");  // 0.006 USD a minute
  for (const Case& c : {Case{0, 1000, 0}, Case{1000, 5, 5}, Case{1500, 1000, 1500}, Case{1, 1, 1},
                        Case{999, 1, 1}, Case{1001, 3, 4}, Case{2001, 1000, 2001}, Case{1234, 0, 0},
                        Case{60'000, whisper, *money::parseUsd("0.006")},
                        Case{1, whisper, whisper / 1000}, Case{1, whisper + 1, whisper / 1000 + 1},
                        Case{1000, std::numeric_limits<std::int64_t>::max(),
                             std::numeric_limits<std::int64_t>::max()}}) {
    EXPECT_EQ(audioCost(c.ms, c.per_second), c.cost) << c.ms << " ms at " << c.per_second;
  }
}

TEST(AudioCost, OverflowIsNoCost) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  EXPECT_FALSE(audioCost(kMax, *money::parseUsd("1")).has_value());
  EXPECT_FALSE(audioCost(2000, kMax).has_value());
  EXPECT_FALSE(audioCost(kMax / 1000 * 1000, 1001).has_value());
}

// Rounding the partial second up must not overflow when ms % 1000 x per_second is within 999 of
// INT64_MAX (`*part + 999` would, giving a negative cost).
TEST(AudioCost, RoundingThePartialSecondDoesNotOverflow) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  // 999 x 9232604641496272 = INT64_MAX - 79: the cost, 9223372036854776, fits easily.
  EXPECT_EQ(audioCost(999, kMax / 999), 9'223'372'036'854'776);
  // 1 s and 1 ms at INT64_MAX a second does not fit.
  EXPECT_FALSE(audioCost(1001, kMax).has_value());
}

}  // namespace
}  // namespace tollgate::billing
