// Anthropic's usage as our usage model, whole and streamed: cache reads and writes (with their
// 5-minute / 1-hour split) kept as kinds of the prompt, and counts that cannot be true refused.
#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/prices.hpp"
#include "providers/anthropic/usage.hpp"
#include "providers/anthropic_fixtures.hpp"

namespace tollgate::providers::anthropic {
namespace {

using namespace test;  // The fixtures of these tests.

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

/// The usage of a whole answer whose usage object is `usage`.
std::optional<usage::Counts> wholeUsage(const std::string& usage) {
  const auto c =
      message(R"({"id":"m","content":[{"type":"text","text":"x"}],"usage":)" + usage + "}");
  EXPECT_TRUE(c.ok());
  return c.ok() ? c->usage : std::nullopt;
}

usage::Counts counts(std::int64_t prompt, std::int64_t completion, std::int64_t cached,
                     std::int64_t writes, std::int64_t writes_1h) {
  usage::Counts c = usage::of(prompt, completion);
  c.cached_tokens = cached;
  c.cache_write_tokens = writes;
  c.cache_write_1h_tokens = writes_1h;
  c.prompt_details = true;
  return c;
}

TEST(AnthropicUsage, CacheReadsAndWritesAreKindsOfThePrompt) {
  struct Case {
    std::string usage;
    usage::Counts want;
  };
  const std::vector<Case> cases{
      // The split: of 30 writes, 20 for an hour.
      {R"({"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":30,
          "cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20},
          "output_tokens":7})",
       counts(140, 7, 100, 30, 20)},
      // No cache_creation (or null): every write is a 5-minute one.
      {R"({"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":30,
          "output_tokens":7})",
       counts(140, 7, 100, 30, 0)},
      {R"({"input_tokens":10,"cache_creation_input_tokens":30,"cache_creation":null,
          "output_tokens":7})",
       counts(40, 7, 0, 30, 0)},
      // A duration left out of the split is none.
      {R"({"input_tokens":1,"cache_creation_input_tokens":4,
          "cache_creation":{"ephemeral_1h_input_tokens":4},"output_tokens":2})",
       counts(5, 2, 0, 4, 4)},
      // Cache counts left out or null are none; the client still sees cached_tokens: 0.
      {R"({"input_tokens":3,"cache_read_input_tokens":null,"output_tokens":2})",
       counts(3, 2, 0, 0, 0)},
      // A sum past int64 saturates, and the kinds stay within it.
      {R"({"input_tokens":9223372036854775807,"cache_read_input_tokens":5,"output_tokens":1})",
       counts(kMax, 1, 5, 0, 0)},
      {R"({"input_tokens":0,"cache_read_input_tokens":9223372036854775807,
          "cache_creation_input_tokens":9223372036854775807,"output_tokens":1})",
       counts(kMax, 1, kMax, 0, 0)},
  };
  for (const Case& c : cases) {
    const auto got = wholeUsage(c.usage);
    ASSERT_TRUE(got.has_value()) << c.usage;
    EXPECT_EQ(*got, c.want) << c.usage;
    EXPECT_TRUE(usage::consistent(*got)) << c.usage;
  }
}

TEST(AnthropicUsage, CountsThatCannotBeTrueLeaveTheUsageMissing) {
  for (const char* usage : {
           // The split does not sum to the writes (either way).
           R"({"input_tokens":1,"cache_creation_input_tokens":30,
               "cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":10},
               "output_tokens":1})",
           R"({"input_tokens":1,"cache_creation_input_tokens":3,
               "cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":4},
               "output_tokens":1})",
           R"({"input_tokens":1,"cache_creation":{"ephemeral_1h_input_tokens":4},
               "output_tokens":1})",
           R"({"input_tokens":1,"cache_creation_input_tokens":2,
               "cache_creation":{"ephemeral_5m_input_tokens":9223372036854775807,
               "ephemeral_1h_input_tokens":9223372036854775807},"output_tokens":1})",
           // A count that is not one.
           R"({"input_tokens":1,"cache_creation_input_tokens":2,
               "cache_creation":{"ephemeral_5m_input_tokens":3,"ephemeral_1h_input_tokens":-1},
               "output_tokens":1})",
           R"({"input_tokens":1,"cache_creation_input_tokens":2,
               "cache_creation":{"ephemeral_5m_input_tokens":"2"},"output_tokens":1})",
           R"({"input_tokens":1,"cache_creation_input_tokens":2,"cache_creation":2,
               "output_tokens":1})",
           R"({"input_tokens":1,"cache_read_input_tokens":-5,"output_tokens":1})",
           R"({"input_tokens":1,"cache_read_input_tokens":1.5,"output_tokens":1})",
           R"({"input_tokens":1,"cache_creation_input_tokens":"2","output_tokens":1})",
           R"({"input_tokens":1,"output_tokens":18446744073709551615})",
           // The totals are not known.
           R"({"cache_read_input_tokens":5,"output_tokens":1})",
           R"({"input_tokens":null,"output_tokens":1})",
           R"({"input_tokens":1})",
       }) {
    EXPECT_FALSE(wholeUsage(usage).has_value()) << usage;
  }
}

TEST(AnthropicUsage, TheClientSeesTheKindsAndTheirPrice) {
  const auto c = message(R"({"id":"m","content":[],"usage":{"input_tokens":10,
      "cache_read_input_tokens":100,"cache_creation_input_tokens":30,"cache_creation":
      {"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20},"output_tokens":7}})");
  ASSERT_TRUE(c.ok());
  money::Prices prices;
  // Pico-USD per token: input 1000, cached 100, 5-minute writes 1250, 1-hour 2000, output 5000.
  prices.base = money::Rates{1000, 5000, 100, 1250, 2000, 0, 5000};
  openai::ResponseMeta m = meta(false);
  m.pricing = money::Pricing{&prices, money::kPicoPerUsd};
  const auto out = parsed(openai::encodeCompletion(*c, m));
  const money::Pico cost = 10 * 1000 + 100 * 100 + 10 * 1250 + 20 * 2000 + 7 * 5000;
  expectJson(out["usage"], R"({"prompt_tokens":140,"completion_tokens":7,"total_tokens":147,
      "prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0},
      "tollgate::cache_write_tokens":30,"tollgate::cache_write_1h_tokens":20,
      "tollgate::cost":)" + money::formatUsd(cost) +
                               "}");
}

/// A stream whose message_start reports `start` and message_delta `delta`.
Streamed streamWithUsage(const std::string& start, const std::string& delta) {
  return run(
      {{"message_start", R"({"type":"message_start","message":{"id":"m","usage":)" + start + "}}"},
       {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},)"
                         R"("usage":)" +
                             delta + "}"},
       {"message_stop", R"({"type":"message_stop"})"}},
      meta(true));
}

constexpr const char* kStartWithSplit = R"({"input_tokens":10,"cache_read_input_tokens":100,
    "cache_creation_input_tokens":30,"cache_creation":{"ephemeral_5m_input_tokens":10,
    "ephemeral_1h_input_tokens":20},"output_tokens":1})";

TEST(AnthropicStreamUsage, MessageStartsKindsReachTheFinalUsage) {
  for (const char* delta : {
           R"({"output_tokens":15})",
           // Input counts repeated (as Anthropic does when they changed), or null: kept.
           R"({"input_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":30,
               "output_tokens":15})",
           R"({"input_tokens":null,"cache_read_input_tokens":null,
               "cache_creation_input_tokens":null,"output_tokens":15})",
       }) {
    const Streamed s = streamWithUsage(kStartWithSplit, delta);
    ASSERT_FALSE(s.error) << delta;
    ASSERT_TRUE(s.usage.has_value()) << delta;
    EXPECT_EQ(*s.usage, counts(140, 15, 100, 30, 20)) << delta;
    expectJson(s.chunks.back()["usage"], R"({"prompt_tokens":140,"completion_tokens":15,
        "total_tokens":155,"prompt_tokens_details":{"cached_tokens":100,"audio_tokens":0},
        "tollgate::cache_write_tokens":30,"tollgate::cache_write_1h_tokens":20})");
  }
}

TEST(AnthropicStreamUsage, MessageDeltasInputCountsReplaceMessageStarts) {
  const Streamed s = streamWithUsage(
      R"({"input_tokens":10,"cache_read_input_tokens":5,"output_tokens":1})",
      R"({"input_tokens":12,"cache_read_input_tokens":7,"cache_creation_input_tokens":4,
          "cache_creation":{"ephemeral_5m_input_tokens":1,"ephemeral_1h_input_tokens":3},
          "output_tokens":9})");
  ASSERT_TRUE(s.usage.has_value());
  EXPECT_EQ(*s.usage, counts(23, 9, 7, 4, 3));
}

TEST(AnthropicStreamUsage, AnInconsistentSplitLeavesTheUsageMissing) {
  // Writes changed after message_start without a split for them: the hour's share is not known.
  const Streamed changed =
      streamWithUsage(kStartWithSplit, R"({"cache_creation_input_tokens":31,"output_tokens":15})");
  EXPECT_TRUE(changed.complete);
  EXPECT_FALSE(changed.usage.has_value());
  EXPECT_FALSE(changed.chunks.back().HasMember("usage"));
  const Streamed wrong = streamWithUsage(
      R"({"input_tokens":1,"cache_creation_input_tokens":3,"cache_creation":
          {"ephemeral_5m_input_tokens":1,"ephemeral_1h_input_tokens":1},"output_tokens":1})",
      R"({"output_tokens":15})");
  EXPECT_FALSE(wrong.usage.has_value());
}

TEST(AnthropicStreamUsage, TheInterimUsageKeepsTheKinds) {
  const openai::ResponseMeta unbilled = meta(false);  // The decoder keeps a reference to it.
  StreamDecoder decoder(unbilled, false, 1);
  std::string out;
  std::optional<openai::Usage> usage;
  std::string start = R"({"type":"message_start","message":{"id":"m","usage":)" +
                      std::string(kStartWithSplit) + "}}";
  ASSERT_TRUE(decoder.event("message_start", start, out, usage).ok());
  EXPECT_FALSE(usage.has_value());  // Not final.
  ASSERT_TRUE(decoder.reportedUsage().has_value());
  EXPECT_EQ(*decoder.reportedUsage(), counts(140, 1, 100, 30, 20));
}

}  // namespace
}  // namespace tollgate::providers::anthropic
