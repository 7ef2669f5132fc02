#include <gtest/gtest.h>

#include <vector>

#include "openai/sse.hpp"
#include "providers/gemini/gemini.hpp"
#include "providers/gemini_fixtures.hpp"

namespace tollgate::providers::gemini {
namespace {

using namespace test;

openai::ResponseMeta streamMeta(bool include_usage) {
  openai::ResponseMeta m;
  m.model = "gem";
  m.service_tier = "auto";
  m.include_usage = include_usage;
  return m;
}

struct Decoded {
  std::vector<rapidjson::Document> chunks;
  bool complete = false;
  std::optional<Error> error;
  std::optional<openai::Usage> usage;
  std::optional<openai::Usage> interim;
};

Decoded run(const std::vector<std::string>& events, bool include_usage, bool ended = true) {
  const openai::ResponseMeta meta = streamMeta(include_usage);
  StreamDecoder decoder(meta, 5);
  Decoded r;
  std::string out;
  for (const std::string& e : events) {
    std::string data = e;
    auto step = decoder.event(data, out);
    if (!step) {
      r.error = step.error();
      break;
    }
    EXPECT_FALSE(*step);  // Never complete before the body ends.
  }
  if (!r.error && ended) {
    r.complete = decoder.finish(out, r.usage);
  }
  r.interim = decoder.reportedUsage();
  r.chunks = providers::test::sseChunks(out);
  return r;
}

const std::vector<std::string> kThinking = {
    R"({"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true}]}}],
        "usageMetadata":{"promptTokenCount":12,"thoughtsTokenCount":30},"responseId":"s1",
        "modelVersion":"gemini-2.5-flash"})",
    R"({"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]}}],
        "usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":1,"thoughtsTokenCount":60}})",
    R"({"candidates":[{"content":{"role":"model","parts":[{"text":"!"}]},"finishReason":"STOP"}],
        "usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":2,"thoughtsTokenCount":60,
        "cachedContentTokenCount":4}})"};

TEST(GeminiStream, ThinkingTextFinishAndTheLastUsage) {
  const Decoded r = run(kThinking, true);
  ASSERT_FALSE(r.error);
  EXPECT_TRUE(r.complete);
  ASSERT_EQ(r.chunks.size(), 6U);
  EXPECT_STREQ(r.chunks[0]["choices"][0]["delta"]["role"].GetString(), "assistant");
  EXPECT_STREQ(r.chunks[0]["id"].GetString(), "chatcmpl-s1");
  EXPECT_STREQ(r.chunks[1]["choices"][0]["delta"]["reasoning_content"].GetString(), "hmm");
  EXPECT_STREQ(r.chunks[2]["choices"][0]["delta"]["content"].GetString(), "Hi");
  EXPECT_STREQ(r.chunks[3]["choices"][0]["delta"]["content"].GetString(), "!");
  EXPECT_STREQ(r.chunks[4]["choices"][0]["finish_reason"].GetString(), "stop");
  EXPECT_EQ(r.chunks[5]["usage"]["completion_tokens"].GetInt(), 62);
  EXPECT_EQ(r.chunks[5]["usage"]["prompt_tokens_details"]["cached_tokens"].GetInt(), 4);
  ASSERT_TRUE(r.usage);
  EXPECT_EQ(r.usage->prompt_tokens, 12);
  EXPECT_EQ(r.usage->completion_tokens, 62);
  EXPECT_EQ(r.usage->reasoning_tokens, 60);
  EXPECT_EQ(r.usage->cached_tokens, 4);
}

TEST(GeminiStream, NoUsageChunkUnlessAsked) {
  const Decoded r = run(kThinking, false);
  EXPECT_EQ(r.chunks.size(), 5U);
  EXPECT_TRUE(r.usage);
}

TEST(GeminiStream, ACutStreamIsIncompleteAndKeepsTheLastUsageSeen) {
  const Decoded r = run({kThinking[0], kThinking[1]}, true);
  EXPECT_FALSE(r.complete);
  EXPECT_FALSE(r.usage);
  ASSERT_TRUE(r.interim);
  EXPECT_EQ(r.interim->completion_tokens, 61);
  EXPECT_EQ(r.interim->reasoning_tokens, 60);
}

TEST(GeminiStream, FunctionCallsAreWholeDeltasWithIndexesAndIds) {
  const Decoded r = run({R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"f",
          "args":{"q":"x"}}}]}}]})",
                         R"({"candidates":[{"content":{"parts":[{"functionCall":{"name":"g"}}]},
          "finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":4}})"},
                        false);
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.chunks.size(), 4U);
  expectSameJson(r.chunks[1]["choices"][0]["delta"]["tool_calls"],
                 R"([{"index":0,"id":"call_0","type":"function",
               "function":{"name":"f","arguments":"{\"q\":\"x\"}"}}])");
  EXPECT_EQ(r.chunks[2]["choices"][0]["delta"]["tool_calls"][0]["index"].GetInt(), 1);
  EXPECT_STREQ(r.chunks[2]["choices"][0]["delta"]["tool_calls"][0]["id"].GetString(), "call_1");
  EXPECT_STREQ(r.chunks[3]["choices"][0]["finish_reason"].GetString(), "tool_calls");
}

TEST(GeminiStream, ErrorsAndBlockedPrompts) {
  Decoded r =
      run({R"({"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}})"}, false);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, ErrorKind::UpstreamRateLimited);
  r = run({R"({"promptFeedback":{"blockReason":"SAFETY"}})"}, false);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, ErrorKind::UpstreamInvalidRequest);
  r = run({"not json"}, false);
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->kind, ErrorKind::UpstreamError);
  r = run({R"({"candidates":{}})"}, false);
  ASSERT_TRUE(r.error);
}

TEST(GeminiStream, AnInvalidLastUsageLeavesItMissing) {
  const Decoded r =
      run({R"({"candidates":[{"content":{"parts":[{"text":"a"}]},"finishReason":"STOP"}],
      "usageMetadata":{"promptTokenCount":-4,"candidatesTokenCount":1}})"},
          true);
  EXPECT_TRUE(r.complete);
  EXPECT_FALSE(r.usage);
}

}  // namespace
}  // namespace tollgate::providers::gemini
