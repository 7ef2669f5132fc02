#include <gtest/gtest.h>

#include "providers/gemini/gemini.hpp"
#include "providers/gemini_fixtures.hpp"

namespace tollgate::providers::gemini {
namespace {

using namespace test;

Result<openai::Completion> answer(std::string body, KeepRaw keep = {}) {
  return parseResponse(body, keep, 77);
}

std::optional<openai::Usage> usageOf(std::string_view metadata) {
  return readUsage(parsedJson(metadata));
}

TEST(GeminiAnswer, TextThinkingAndFinish) {
  auto c = answer(R"({"candidates":[{"content":{"role":"model","parts":[
      {"text":"let me think","thought":true},{"text":"Hello"},{"text":" there"}]},
      "finishReason":"STOP","index":0}],"modelVersion":"gemini-2.5-pro","responseId":"r1",
      "usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5,"thoughtsTokenCount":40,
        "totalTokenCount":55}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->id, "chatcmpl-r1");
  EXPECT_EQ(c->upstream_model, "gemini-2.5-pro");
  ASSERT_EQ(c->choices.size(), 1U);
  EXPECT_EQ(c->choices[0].content, "Hello there");
  EXPECT_EQ(c->choices[0].reasoning_content, "let me think");
  EXPECT_EQ(c->choices[0].finish_reason, "stop");
  ASSERT_TRUE(c->usage);
  EXPECT_EQ(c->usage->prompt_tokens, 10);
  EXPECT_EQ(c->usage->completion_tokens, 45);  // Thinking is output.
  EXPECT_EQ(c->usage->reasoning_tokens, 40);
}

TEST(GeminiAnswer, ControlCharactersInTheTextAreEscapedForTheClient) {
  // A terminal colour code: decoded from the upstream's escape, written back escaped (raw, the
  // bytes 0x1A to 0x1F made the client's body invalid JSON).
  auto c = answer(R"({"candidates":[{"content":{"parts":[
      {"text":"a text long enough to be read sixteen bytes at a time: \u001b[31mred\u001b[0m and \u001a\u001f"}]},"finishReason":"STOP"}],
      "usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const openai::ResponseMeta meta{"gem", "ep-1", "auto", false, false, false, std::nullopt, ""};
  const std::string body = openai::encodeCompletion(*c, meta);
  EXPECT_NE(body.find(R"(\u001B[31mred\u001B[0m and \u001A\u001F")"), std::string::npos) << body;
  for (char byte = 0; byte < 0x20; ++byte) {
    EXPECT_EQ(body.find(byte), std::string::npos) << int(byte);
  }
}

TEST(GeminiAnswer, FunctionCallsGetIdsAndFinishAsToolCalls) {
  auto c = answer(R"({"candidates":[{"content":{"role":"model","parts":[
      {"functionCall":{"name":"a","args":{"x":1}}},{"functionCall":{"name":"b"}}]},
      "finishReason":"STOP"}]})");
  ASSERT_TRUE(c.ok());
  const auto& ch = c->choices[0];
  EXPECT_FALSE(ch.content);
  ASSERT_EQ(ch.tool_calls.size(), 2U);
  EXPECT_EQ(ch.tool_calls[0].id, "call_0");
  EXPECT_EQ(ch.tool_calls[0].name, "a");
  EXPECT_EQ(ch.tool_calls[0].arguments, R"({"x":1})");
  EXPECT_EQ(ch.tool_calls[1].id, "call_1");
  EXPECT_EQ(ch.tool_calls[1].arguments, "{}");
  EXPECT_EQ(ch.finish_reason, "tool_calls");
  EXPECT_FALSE(c->usage);  // None reported: estimated.
}

TEST(GeminiAnswer, AThoughtSignatureTravelsInTheCallsId) {
  auto c = answer(R"({"candidates":[{"content":{"parts":[
      {"functionCall":{"name":"a","args":{}},"thoughtSignature":"c2lnbmVk"},
      {"functionCall":{"name":"b","args":{}}}]},"finishReason":"STOP"}]})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->choices[0].tool_calls[0].id, "call_0__thought_signature__c2lnbmVk");
  EXPECT_EQ(c->choices[0].tool_calls[1].id, "call_1");
}

TEST(GeminiAnswer, FinishReasons) {
  EXPECT_EQ(finishReason("STOP", false), "stop");
  EXPECT_EQ(finishReason("MAX_TOKENS", false), "length");
  for (auto r :
       {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}) {
    EXPECT_EQ(finishReason(r, false), "content_filter") << r;
  }
  EXPECT_EQ(finishReason("OTHER", false), "stop");
  EXPECT_EQ(finishReason("STOP", true), "tool_calls");
  auto c = answer(R"({"candidates":[{"finishReason":"SAFETY","safetyRatings":[]}]})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->choices[0].content, "");
  EXPECT_EQ(c->choices[0].finish_reason, "content_filter");
}

TEST(GeminiAnswer, ABlockedPromptIsAnInvalidRequestNamingTheReason) {
  auto c = answer(R"({"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},
      "usageMetadata":{"promptTokenCount":7}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().kind, ErrorKind::UpstreamInvalidRequest);
  EXPECT_NE(c.error().message.find("PROHIBITED_CONTENT"), std::string::npos);
}

TEST(GeminiAnswer, MalformedAnswersAreUpstreamErrors) {
  for (const char* body : {"[]", "{}", R"({"candidates":[]})", R"({"candidates":[1]})",
                           R"({"candidates":[{"content":{"parts":{}}}]})",
                           R"({"candidates":[{"content":{"parts":[{"functionCall":{}}]}}]})"}) {
    auto c = answer(body);
    ASSERT_FALSE(c.ok()) << body;
    EXPECT_EQ(c.error().kind, ErrorKind::UpstreamError) << body;
  }
}

TEST(GeminiAnswer, RawUsageAndResponseAreKept) {
  auto c = answer(R"({"candidates":[{"content":{"parts":[{"text":"x"}]},"finishReason":"STOP"}],
      "usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1}})",
                  {true, true});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->raw_usage_json, R"({"promptTokenCount":1,"candidatesTokenCount":1})");
  EXPECT_NE(c->raw_response_json.find("candidates"), std::string::npos);
}

TEST(GeminiUsage, CachedToolPromptAndThoughts) {
  const auto u = usageOf(R"({"promptTokenCount":1000,"cachedContentTokenCount":800,
      "toolUsePromptTokenCount":50,"candidatesTokenCount":20,"thoughtsTokenCount":300})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->prompt_tokens, 1050);
  EXPECT_EQ(u->cached_tokens, 800);
  EXPECT_EQ(u->completion_tokens, 320);
  EXPECT_EQ(u->reasoning_tokens, 300);
  EXPECT_TRUE(usage::consistent(*u));
}

TEST(GeminiUsage, AbsentCountsAreZeroButThePromptIsRequired) {
  const auto u = usageOf(R"({"promptTokenCount":9})");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->completion_tokens, 0);
  EXPECT_FALSE(usageOf(R"({"candidatesTokenCount":9})"));
}

TEST(GeminiUsage, InvalidCountsLeaveTheUsageMissing) {
  for (const char* m :
       {R"({"promptTokenCount":-1})", R"({"promptTokenCount":1.5})", R"({"promptTokenCount":"3"})",
        R"({"promptTokenCount":3,"thoughtsTokenCount":-2})",
        R"({"promptTokenCount":3,"cachedContentTokenCount":4})",
        R"({"promptTokenCount":9223372036854775807,"toolUsePromptTokenCount":1})",
        R"({"promptTokenCount":1,"candidatesTokenCount":18446744073709551615})", "[]"}) {
    EXPECT_FALSE(usageOf(m)) << m;
  }
}

TEST(GeminiErrors, ByStatus) {
  const auto kind = [](int http, const char* status) {
    return translateError(http, std::string(R"({"error":{"code":)") + std::to_string(http) +
                                    R"(,"message":"m","status":")" + status + R"("}})")
        .kind;
  };
  EXPECT_EQ(kind(400, "INVALID_ARGUMENT"), ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(kind(400, "FAILED_PRECONDITION"), ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(kind(404, "NOT_FOUND"), ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(kind(401, "UNAUTHENTICATED"), ErrorKind::UpstreamAuthFailed);
  EXPECT_EQ(kind(403, "PERMISSION_DENIED"), ErrorKind::UpstreamAuthFailed);
  EXPECT_EQ(kind(429, "RESOURCE_EXHAUSTED"), ErrorKind::UpstreamRateLimited);
  EXPECT_EQ(kind(503, "UNAVAILABLE"), ErrorKind::UpstreamUnavailable);
  EXPECT_EQ(kind(504, "DEADLINE_EXCEEDED"), ErrorKind::UpstreamTimeout);
  EXPECT_EQ(kind(500, "INTERNAL"), ErrorKind::UpstreamError);
  EXPECT_EQ(translateError(503, "oops").kind, ErrorKind::UpstreamUnavailable);
  EXPECT_EQ(translateError(429, "").kind, ErrorKind::UpstreamRateLimited);
}

TEST(GeminiErrors, CredentialErrorsAreNeverRelayed) {
  const Error e = translateError(
      400,
      R"({"error":{"code":400,"message":"API key goog-secret not valid","status":"UNAUTHENTICATED"}})");
  EXPECT_EQ(e.kind, ErrorKind::UpstreamAuthFailed);
  EXPECT_EQ(e.message.find("goog-secret"), std::string::npos);
}

}  // namespace
}  // namespace tollgate::providers::gemini
