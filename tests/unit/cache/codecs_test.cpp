#include "cache/codecs.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/json.hpp"

namespace tollgate::cache {
namespace {

/// A whole answer as the gateway relays an OpenAI-compatible reasoning upstream's, billed.
constexpr std::string_view kAnswer =
    R"({"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant",)"
    R"("reasoning_content":"Let me think.","content":"Hi","refusal":null}}],"usage":{)"
    R"("prompt_tokens":1000,"completion_tokens":40,"total_tokens":1040,"prompt_tokens_details":)"
    R"({"cached_tokens":600,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":30,)"
    R"("audio_tokens":0,"accepted_prediction_tokens":0},"vendor_extra":"x",)"
    R"("tollgate::cost":0.00063},"tollgate::raw_usage":{"prompt_tokens":1000}})";

rapidjson::Document keptBody(const exchange::TokenUsage& charged) {
  const openai::ResponseMeta meta;
  const ChatAnswerCodec codec(meta, false, true);
  exchange::Transcript sent;
  sent.status = 200;
  sent.body = kAnswer;
  sent.complete = true;
  const auto kept = codec.keep("key", sent, charged);
  EXPECT_EQ(kept.size(), 1u);
  rapidjson::Document d;
  EXPECT_FALSE(json::parse(d, kept.empty() ? std::string("{}") : kept[0].body));
  return d;
}

TEST(ChatAnswerCodec, KeepsTheMessageAndTheUsageDetailsWithTheChargedCounts) {
  exchange::TokenUsage charged = usage::of(1000, 40);
  charged.cached_tokens = 600;
  charged.reasoning_tokens = 30;
  charged.prompt_details = true;
  charged.completion_details = true;
  const rapidjson::Document d = keptBody(charged);
  EXPECT_EQ(json::view(d["choices"][0]["message"]["reasoning_content"]), "Let me think.");
  EXPECT_TRUE(d["choices"][0]["message"]["refusal"].IsNull());
  const auto& u = d["usage"];
  EXPECT_EQ(u["prompt_tokens"].GetInt(), 1000);
  EXPECT_EQ(u["total_tokens"].GetInt(), 1040);
  EXPECT_EQ(u["prompt_tokens_details"]["cached_tokens"].GetInt(), 600);
  EXPECT_EQ(u["completion_tokens_details"]["reasoning_tokens"].GetInt(), 30);
  EXPECT_EQ(u["completion_tokens_details"]["accepted_prediction_tokens"].GetInt(), 0);
  EXPECT_EQ(json::view(u["vendor_extra"]), "x");
  EXPECT_EQ(u["tollgate::cost"].GetInt(), 0);  // A hit is charged nothing.
  EXPECT_FALSE(d.HasMember("tollgate::raw_usage"));
}

TEST(ChatAnswerCodec, DetailsTheChargeDidNotTakeAreLeftOut) {
  // Counts clamped or estimated: the totals charged, and no details the charge did not read.
  const rapidjson::Document d = keptBody(usage::of(900, 40));
  const auto& u = d["usage"];
  EXPECT_EQ(u["prompt_tokens"].GetInt(), 900);
  EXPECT_EQ(u["total_tokens"].GetInt(), 940);
  EXPECT_FALSE(u.HasMember("prompt_tokens_details"));
  EXPECT_FALSE(u.HasMember("completion_tokens_details"));
}

}  // namespace
}  // namespace tollgate::cache
