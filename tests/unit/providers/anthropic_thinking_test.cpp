// Anthropic's thinking blocks as reasoning_content, whole and streamed; redacted thinking and
// signatures never reach the client.
#include <gtest/gtest.h>

#include <string>

#include "providers/anthropic_fixtures.hpp"

namespace tollgate::providers::anthropic {
namespace {

using namespace test;  // The fixtures of these tests.

TEST(AnthropicThinking, WholeThinkingIsTheMessagesReasoningContent) {
  const auto c = message(R"({"id":"m","content":[
      {"type":"thinking","thinking":"First, ","signature":"sig-secret-1"},
      {"type":"redacted_thinking","data":"opaque-redacted"},
      {"type":"thinking","thinking":"the weather.","signature":"sig-secret-2"},
      {"type":"text","text":"Sunny."}],"stop_reason":"end_turn",
      "usage":{"input_tokens":1,"output_tokens":2}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->choices[0].reasoning_content, "First, the weather.");
  EXPECT_EQ(c->choices[0].content, "Sunny.");
  const std::string out = openai::encodeCompletion(*c, meta(false));
  for (const char* hidden : {"sig-secret", "opaque-redacted", "redacted_thinking"}) {
    EXPECT_EQ(out.find(hidden), std::string::npos) << hidden;
  }
  const auto d = parsed(out);
  // After role, before content.
  expectJson(d["choices"][0]["message"], R"({"role":"assistant",
      "reasoning_content":"First, the weather.","content":"Sunny."})");
  const auto& m = d["choices"][0]["message"];
  EXPECT_STREQ(m.MemberBegin()->name.GetString(), "role");
  EXPECT_STREQ((m.MemberBegin() + 1)->name.GetString(), "reasoning_content");
}

TEST(AnthropicThinking, WithoutThinkingThereIsNoReasoningContent) {
  const auto c = message(R"({"id":"m","content":[{"type":"redacted_thinking","data":"x"},
      {"type":"text","text":"Hi"}],"usage":{"input_tokens":1,"output_tokens":2}})");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->choices[0].reasoning_content.has_value());
  EXPECT_FALSE(parsed(openai::encodeCompletion(*c, meta(false)))["choices"][0]["message"].HasMember(
      "reasoning_content"));
}

TEST(AnthropicThinking, StreamedThinkingIsDeltaReasoningContent) {
  const Streamed s = run(
      {
          {"message_start", R"({"type":"message_start","message":{"id":"m"}})"},
          {"content_block_start", R"({"type":"content_block_start","index":0,
            "content_block":{"type":"thinking","thinking":""}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":0,
            "delta":{"type":"thinking_delta","thinking":"hmm \"q\""}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":0,
            "delta":{"type":"signature_delta","signature":"sig-secret"}})"},
          {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
          {"content_block_start", R"({"type":"content_block_start","index":1,
            "content_block":{"type":"redacted_thinking","data":"opaque-redacted"}})"},
          {"content_block_stop", R"({"type":"content_block_stop","index":1})"},
          {"content_block_start", R"({"type":"content_block_start","index":2,
            "content_block":{"type":"text","text":""}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":2,
            "delta":{"type":"text_delta","text":"Sunny."}})"},
          {"some_future_event", R"({"type":"some_future_event"})"},
      },
      meta(false));
  ASSERT_FALSE(s.error);
  ASSERT_EQ(s.chunks.size(), 3U);
  expectJson(s.chunks[1]["choices"][0]["delta"], R"({"reasoning_content":"hmm \"q\""})");
  expectJson(s.chunks[2]["choices"][0]["delta"], R"({"content":"Sunny."})");
  for (const auto& c : s.chunks) {
    const std::string text = json::serialize(c);
    EXPECT_EQ(text.find("sig-secret"), std::string::npos);
    EXPECT_EQ(text.find("opaque-redacted"), std::string::npos);
  }
}

TEST(AnthropicThinking, ABlockStartsThinkingIsSentAndAThinkingDeltaNeedsText) {
  const std::string start = R"({"type":"message_start","message":{"id":"m"}})";
  const Streamed s = run(
      {{"message_start", start}, {"content_block_start", R"({"type":"content_block_start","index":0,
                            "content_block":{"type":"thinking","thinking":"already"}})"}},
      meta(false));
  ASSERT_EQ(s.chunks.size(), 2U);
  expectJson(s.chunks[1]["choices"][0]["delta"], R"({"reasoning_content":"already"})");
  const Streamed bad = run(
      {{"message_start", start}, {"content_block_delta", R"({"type":"content_block_delta","index":0,
                              "delta":{"type":"thinking_delta","thinking":7}})"}},
      meta(false));
  ASSERT_TRUE(bad.error);
  EXPECT_EQ(bad.error->kind, ErrorKind::UpstreamError);
}

}  // namespace
}  // namespace tollgate::providers::anthropic
