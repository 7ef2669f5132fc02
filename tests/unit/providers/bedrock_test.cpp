// The Bedrock adapter: our request as a Converse body, Converse's answers (whole and streamed)
// as ours, its usage and its errors, and an attempt's signing.
#include "providers/bedrock/bedrock.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "openai/sse.hpp"
#include "providers/stream_fixtures.hpp"

namespace tollgate::providers::bedrock {
namespace {

config::Provider provider() {
  config::Provider p;
  p.name = "nova";
  p.type = config::ProviderType::Bedrock;
  p.model = "anthropic.claude-3-haiku-20240307-v1:0";
  p.region = "us-east-1";
  p.aws.access_key_id = "AKIDEXAMPLE";
  p.aws.secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
  p.default_max_tokens = 1234;
  return p;
}

openai::ChatRequest decode(std::string& text) {
  auto req = openai::decodeChatRequest(text);
  EXPECT_TRUE(req.ok()) << req.error().message;
  return std::move(req).value();
}

rapidjson::Document parsed(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

void expectJson(const rapidjson::Value& actual, std::string_view expected) {
  const auto e = parsed(expected);
  EXPECT_TRUE(actual == e) << "actual: " << json::serialize(actual) << "\nexpected: " << expected;
}

rapidjson::Document upstreamBody(std::string request) {
  const openai::ChatRequest req = decode(request);
  auto body = buildConverseBody(req, provider());
  EXPECT_TRUE(body.ok()) << body.error().message;
  return parsed(body.ok() ? *body : "null");
}

Error refusal(std::string request) {
  const openai::ChatRequest req = decode(request);
  auto body = buildConverseBody(req, provider());
  EXPECT_FALSE(body.ok());
  return body.ok() ? Error{ErrorKind::Internal, "", ""} : body.error();
}

openai::ResponseMeta meta(bool include_usage) {
  openai::ResponseMeta m;
  m.model = "nova";
  m.episode_id = "ep";
  m.service_tier = "auto";
  m.include_usage = include_usage;
  return m;
}

TEST(BedrockRequest, PathEncodesTheModelIdAsOneSegment) {
  EXPECT_EQ(conversePath(provider(), false),
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
  EXPECT_EQ(conversePath(provider(), true),
            "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream");
}

TEST(BedrockRequest, MessagesSystemAndInferenceConfig) {
  const auto d = upstreamBody(R"({"model":"m","messages":[
      {"role":"system","content":"be brief"},{"role":"user","content":"hi"},
      {"role":"user","content":[{"type":"text","text":"there"}]}],
      "temperature":1.5,"top_p":0.9,"stop":["END"],"max_completion_tokens":99,"seed":3})");
  expectJson(d, R"({"messages":[{"role":"user","content":[{"text":"hi"},{"text":"there"}]}],
      "system":[{"text":"be brief"}],
      "inferenceConfig":{"maxTokens":99,"temperature":1.0,"topP":0.9,"stopSequences":["END"]}})");
}

TEST(BedrockRequest, ToolsToolChoiceHistoryImagesAndCachePoints) {
  const auto d = upstreamBody(R"({"model":"m","messages":[
      {"role":"system","content":[{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}]},
      {"role":"user","content":"weather?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function",
        "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
      {"role":"tool","tool_call_id":"t1","content":"18C"},
      {"role":"user","content":[{"type":"text","text":"so?","cache_control":{"type":"ephemeral","ttl":"5m"}},
        {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,AAAA"}}]}],
      "tools":[{"type":"function","function":{"name":"get_weather","description":"d",
        "parameters":{"type":"object"}},"cache_control":{"type":"ephemeral"}}],
      "tool_choice":{"type":"function","function":{"name":"get_weather"}}})");
  expectJson(d, R"({"messages":[
      {"role":"user","content":[{"text":"weather?"}]},
      {"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"get_weather","input":{"city":"Paris"}}}]},
      {"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"18C"}]}},
        {"text":"so?"},{"cachePoint":{"type":"default"}},
        {"image":{"format":"jpeg","source":{"bytes":"AAAA"}}}]}],
      "system":[{"text":"sys"},{"cachePoint":{"type":"default"}}],
      "inferenceConfig":{"maxTokens":1234},
      "toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","description":"d",
        "inputSchema":{"json":{"type":"object"}}}},{"cachePoint":{"type":"default"}}],
        "toolChoice":{"tool":{"name":"get_weather"}}}})");
  const auto any = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"})");
  expectJson(any["toolConfig"]["toolChoice"], R"({"any":{}})");
}

TEST(BedrockRequest, ACacheControlInAToolResultIsACachePointAfterIt) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"x"},
      {"role":"assistant","tool_calls":[{"id":"t1","type":"function",
        "function":{"name":"f","arguments":""}}]},
      {"role":"tool","tool_call_id":"t1","content":[{"type":"text","text":"big",
        "cache_control":{"type":"ephemeral"}}]}]})");
  expectJson(d["messages"][2], R"({"role":"user","content":[
      {"toolResult":{"toolUseId":"t1","content":[{"text":"big"}]}},
      {"cachePoint":{"type":"default"}}]})");
  expectJson(d["messages"][1], R"({"role":"assistant","content":[
      {"toolUse":{"toolUseId":"t1","name":"f","input":{}}}]})");
}

TEST(BedrockRequest, RefusesWhatConverseCannotBeAsked) {
  const Error url = refusal(R"({"model":"m","messages":[{"role":"user","content":[
      {"type":"image_url","image_url":{"url":"https://example.com/cat.png"}}]}]})");
  EXPECT_EQ(url.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(url.param, "messages");
  EXPECT_EQ(refusal(R"({"model":"m","messages":[{"role":"user","content":[
      {"type":"image_url","image_url":{"url":"data:image/bmp;base64,AA"}}]}]})")
                .param,
            "messages");
  EXPECT_EQ(refusal(R"({"model":"m","messages":[{"role":"user","content":"x",
      "cache_control":null}],"tools":[{"type":"function","function":{"name":"f"},
      "cache_control":{"type":"persistent"}}]})")
                .param,
            "tools");
  EXPECT_EQ(refusal(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"})")
                .param,
            "tool_choice");
  EXPECT_EQ(refusal(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_object"}})")
                .param,
            "response_format");
  std::string five = R"({"model":"m","messages":[{"role":"user","content":[)";
  for (int i = 0; i < 5; ++i) {
    five += std::string(i ? "," : "") +
            R"({"type":"text","text":"p","cache_control":{"type":"ephemeral"}})";
  }
  EXPECT_EQ(refusal(five + "]}]}").param, "messages");
}

TEST(BedrockAnswer, TextToolsReasoningStopReasonAndUsage) {
  std::string body = R"({"output":{"message":{"role":"assistant","content":[
      {"reasoningContent":{"reasoningText":{"text":"hmm","signature":"sig"}}},
      {"text":"Let me check."},
      {"toolUse":{"toolUseId":"tu1","name":"get_weather","input":{"city":"Paris"}}}]}},
      "stopReason":"tool_use","usage":{"inputTokens":10,"outputTokens":5,"totalTokens":65,
      "cacheReadInputTokens":30,"cacheWriteInputTokens":20},"metrics":{"latencyMs":9}})";
  auto c = parseConverse(body, {}, "chatcmpl-x", 7);
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->choices.size(), 1U);
  const auto& choice = c->choices[0];
  EXPECT_EQ(choice.content, "Let me check.");
  EXPECT_EQ(choice.reasoning_content, "hmm");
  ASSERT_EQ(choice.tool_calls.size(), 1U);
  EXPECT_EQ(choice.tool_calls[0].id, "tu1");
  EXPECT_EQ(choice.tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(choice.finish_reason, "tool_calls");
  ASSERT_TRUE(c->usage.has_value());
  EXPECT_EQ(c->usage->prompt_tokens, 60);  // 10 uncached + 30 read + 20 written.
  EXPECT_EQ(c->usage->cached_tokens, 30);
  EXPECT_EQ(c->usage->cache_write_tokens, 20);
  EXPECT_EQ(c->usage->completion_tokens, 5);
}

TEST(BedrockAnswer, StopReasons) {
  EXPECT_EQ(finishReason("end_turn"), "stop");
  EXPECT_EQ(finishReason("stop_sequence"), "stop");
  EXPECT_EQ(finishReason("max_tokens"), "length");
  EXPECT_EQ(finishReason("tool_use"), "tool_calls");
  EXPECT_EQ(finishReason("guardrail_intervened"), "content_filter");
  EXPECT_EQ(finishReason("content_filtered"), "content_filter");
}

TEST(BedrockUsage, CountsThatAreNotCountsLeaveTheUsageMissing) {
  for (const char* bad :
       {R"({"inputTokens":-1,"outputTokens":2})", R"({"inputTokens":1.5,"outputTokens":2})",
        R"({"inputTokens":"1","outputTokens":2})",
        R"({"inputTokens":1,"outputTokens":2,"cacheReadInputTokens":-4})",
        R"({"inputTokens":1,"outputTokens":18446744073709551616})", R"({"inputTokens":1})"}) {
    EXPECT_FALSE(readUsage(parsed(bad)).has_value()) << bad;
  }
  const auto ok =
      readUsage(parsed(R"({"inputTokens":3,"outputTokens":4,"cacheReadInputTokens":null})"));
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->prompt_tokens, 3);
  const auto big = readUsage(
      parsed(R"({"inputTokens":9223372036854775807,"outputTokens":1,"cacheReadInputTokens":5})"));
  ASSERT_TRUE(big.has_value());
  EXPECT_EQ(big->prompt_tokens, 9223372036854775807);
}

TEST(BedrockErrors, TypesAndStatusesMapToOurs) {
  EXPECT_EQ(translateError(429, R"({"message":"Too many requests"})").kind,
            ErrorKind::UpstreamRateLimited);
  EXPECT_EQ(translateError(400, R"({"__type":"ThrottlingException","message":"slow"})").kind,
            ErrorKind::UpstreamRateLimited);
  const Error invalid = translateError(400, R"({"message":"bad input"})");
  EXPECT_EQ(invalid.kind, ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(invalid.message, "bad input");
  const Error denied = translateError(403, R"({"message":"key AKIDEXAMPLE is not allowed"})");
  EXPECT_EQ(denied.kind, ErrorKind::UpstreamAuthFailed);
  EXPECT_EQ(denied.message.find("AKID"), std::string::npos);
  EXPECT_EQ(translateError(404, R"({"message":"no model"})").kind,
            ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(translateError(408, R"({"message":"slow model"})").kind, ErrorKind::UpstreamTimeout);
  EXPECT_EQ(translateError(503, R"({"message":"down"})").kind, ErrorKind::UpstreamUnavailable);
  EXPECT_EQ(errorOfType(429, "ModelNotReadyException", "").kind, ErrorKind::UpstreamUnavailable);
  EXPECT_EQ(translateError(500, "not json").kind, ErrorKind::UpstreamError);
  EXPECT_EQ(translateError(424, R"({"message":"the model failed"})").kind,
            ErrorKind::UpstreamError);  // ModelErrorException: the model's, not the request's.
  EXPECT_EQ(errorOfType(400, "com.amazon.coral#ValidationException", "v").kind,
            ErrorKind::UpstreamInvalidRequest);
}

using test::Streamed;

Streamed run(const std::vector<std::pair<std::string, std::string>>& events,
             const openai::ResponseMeta& m) {
  StreamDecoder decoder(m, "chatcmpl-s", 42);
  return test::runDecoder(decoder, events);
}

TEST(BedrockStream, TextToolUseStopAndUsage) {
  const openai::ResponseMeta m = meta(true);
  const auto s = run(
      {{"messageStart", R"({"role":"assistant"})"},
       {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"Hel"}})"},
       {"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"lo"}})"},
       {"contentBlockStop", R"({"contentBlockIndex":0})"},
       {"contentBlockStart",
        R"({"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"tu1","name":"f"}}})"},
       {"contentBlockDelta", R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"a\""}}})"},
       {"contentBlockDelta", R"({"contentBlockIndex":1,"delta":{"toolUse":{"input":":1}"}}})"},
       {"contentBlockStop", R"({"contentBlockIndex":1})"},
       {"messageStop", R"({"stopReason":"tool_use"})"},
       {"metadata", R"({"usage":{"inputTokens":5,"outputTokens":7,"totalTokens":12,
           "cacheReadInputTokens":2},"metrics":{"latencyMs":1}})"}},
      m);
  ASSERT_FALSE(s.error) << s.error->message;
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.chunks.size(), 8U);
  EXPECT_STREQ(s.chunks[0]["choices"][0]["delta"]["role"].GetString(), "assistant");
  EXPECT_STREQ(s.chunks[1]["choices"][0]["delta"]["content"].GetString(), "Hel");
  EXPECT_STREQ(s.chunks[1]["id"].GetString(), "chatcmpl-s");
  const auto& start = s.chunks[3]["choices"][0]["delta"]["tool_calls"][0];
  EXPECT_EQ(start["index"].GetInt(), 0);
  EXPECT_STREQ(start["id"].GetString(), "tu1");
  EXPECT_STREQ(start["function"]["name"].GetString(), "f");
  EXPECT_STREQ(
      s.chunks[4]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].GetString(),
      "{\"a\"");
  EXPECT_STREQ(s.chunks[6]["choices"][0]["finish_reason"].GetString(), "tool_calls");
  EXPECT_EQ(s.chunks[7]["usage"]["prompt_tokens"].GetInt(), 7);
  ASSERT_TRUE(s.usage);
  EXPECT_EQ(s.usage->cached_tokens, 2);
  EXPECT_EQ(s.usage->completion_tokens, 7);
}

TEST(BedrockStream, ExceptionsAreTypedErrorsAndMisplacedEventsRefused) {
  const openai::ResponseMeta m = meta(false);
  const auto throttled = run({{"messageStart", R"({"role":"assistant"})"},
                              {"exception:throttlingException", R"({"message":"slow down"})"}},
                             m);
  ASSERT_TRUE(throttled.error);
  EXPECT_EQ(throttled.error->kind, ErrorKind::UpstreamRateLimited);
  const auto broken = run({{"messageStart", R"({"role":"assistant"})"},
                           {"exception:modelStreamErrorException", R"({"message":"boom"})"}},
                          m);
  ASSERT_TRUE(broken.error);
  EXPECT_EQ(broken.error->kind, ErrorKind::UpstreamError);
  EXPECT_EQ(broken.error->message, "boom");
  const auto early =
      run({{"contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"x"}})"}}, m);
  ASSERT_TRUE(early.error);
  EXPECT_EQ(early.error->kind, ErrorKind::UpstreamError);
  const auto stray =
      run({{"messageStart", "{}"},
           {"contentBlockDelta", R"({"contentBlockIndex":3,"delta":{"toolUse":{"input":"{}"}}})"}},
          m);
  ASSERT_TRUE(stray.error);
  const auto no_usage = run({{"messageStart", "{}"},
                             {"messageStop", R"({"stopReason":"end_turn"})"},
                             {"metadata", R"({"usage":{"inputTokens":-3,"outputTokens":1}})"}},
                            m);
  EXPECT_TRUE(no_usage.complete);
  EXPECT_FALSE(no_usage.usage);
}

TEST(BedrockExchange, SignsWithSigV4AndRedactsWhatItSent) {
  std::string text = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})";
  const openai::ChatRequest req = decode(text);
  config::Provider p = provider();
  p.aws.session_token = "session-token-value";
  const openai::ResponseMeta m = meta(false);
  auto x = bedrockAdapter().chat(req, p, m);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->framing(), StreamFraming::AwsEventStream);
  auto r = x->request();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream");
  ASSERT_NE(r->signer, nullptr);
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1440938160));
  ASSERT_TRUE(r->signer->sign(*r, "bedrock-runtime.us-east-1.amazonaws.com", t).ok());
  std::map<std::string, std::string> h(r->headers.begin(), r->headers.end());
  EXPECT_EQ(h["X-Amz-Date"], "20150830T123600Z");
  EXPECT_EQ(h["X-Amz-Security-Token"], "session-token-value");
  const std::string& auth = h["Authorization"];
  EXPECT_TRUE(
      auth.starts_with("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/"
                       "bedrock/aws4_request, SignedHeaders=host;x-amz-content-sha256;"
                       "x-amz-date;x-amz-security-token, Signature="))
      << auth;
  const auto secrets = x->sentSecrets();
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), p.aws.secret_access_key), secrets.end());
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), "session-token-value"), secrets.end());
  EXPECT_NE(std::find(secrets.begin(), secrets.end(), auth.substr(auth.rfind('=') + 1)),
            secrets.end());
}

TEST(BedrockExchange, AnApiKeyIsABearerTokenAndNothingIsSigned) {
  std::string text = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
  const openai::ChatRequest req = decode(text);
  config::Provider p = provider();
  p.aws = {};
  p.api_key = "bedrock-api-key";
  const openai::ResponseMeta m = meta(false);
  auto r = bedrockAdapter().chat(req, p, m)->request();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signer, nullptr);
  std::map<std::string, std::string> h(r->headers.begin(), r->headers.end());
  EXPECT_EQ(h["Authorization"], "Bearer bedrock-api-key");
}

}  // namespace
}  // namespace tollgate::providers::bedrock
