#include "providers/anthropic/anthropic.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "core/json.hpp"
#include "openai/sse.hpp"
#include "providers/anthropic_fixtures.hpp"

namespace tollgate::providers::anthropic {
namespace {

using namespace test;  // The fixtures of these tests.

TEST(AnthropicRequest, PathModelMaxTokensAndSampling) {
  EXPECT_EQ(messagesPath(provider()), "/v1/messages");
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
      "temperature":0.5,"top_p":0.9,"stop":["END","##"],"user":"u-7","seed":3,
      "presence_penalty":1,"frequency_penalty":1,"logprobs":true,"n":1,"stream":false})");
  expectJson(d, R"({"model":"claude-upstream","max_tokens":1234,
      "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],
      "stop_sequences":["END","##"],"temperature":0.5,"top_p":0.9,
      "metadata":{"user_id":"u-7"}})");
}

TEST(AnthropicRequest, OutputLimitAndStreamAndTemperatureClamp) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
      "max_tokens":300,"max_completion_tokens":200,"stream":true,"temperature":1.7})");
  EXPECT_EQ(d["max_tokens"].GetInt(), 200);
  EXPECT_TRUE(d["stream"].GetBool());
  EXPECT_DOUBLE_EQ(d["temperature"].GetDouble(), 1.0);
}

TEST(AnthropicRequest, ALimitOfZeroIsRefusedForAnthropicNeedsOneToken) {
  const Error e = refusal(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
      "max_completion_tokens":0})");
  EXPECT_EQ(e.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(e.param, "max_tokens");
}

TEST(AnthropicRequest, TheModelsMaxOutputTokensCapsTheClientsLimit) {
  config::Provider p = provider();
  p.max_output_tokens = 500;
  std::string text = R"({"model":"m","messages":[{"role":"user","content":"hi"}],
      "max_tokens":9000})";
  auto body = buildMessagesBody(decode(text), p);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(parsed(*body)["max_tokens"].GetInt(), 500);
}

TEST(AnthropicRequest, SystemAndDeveloperGoToTheTop) {
  auto d = upstreamBody(R"({"model":"m","messages":[{"role":"system","content":"be brief"},
      {"role":"user","content":"hi"}]})");
  EXPECT_STREQ(d["system"].GetString(), "be brief");
  EXPECT_EQ(d["messages"].Size(), 1U);

  d = upstreamBody(R"({"model":"m","messages":[{"role":"system","content":"one"},
      {"role":"developer","content":[{"type":"text","text":"two"},{"type":"text","text":"3"}]},
      {"role":"user","content":"hi"}]})");
  expectJson(d["system"], R"([{"type":"text","text":"one"},{"type":"text","text":"two"},
      {"type":"text","text":"3"}])");
}

TEST(AnthropicRequest, ImagesInlineAndByUrl) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":[
      {"type":"text","text":"what is this?"},
      {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}},
      {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"low"}}]}]})");
  expectJson(d["messages"], R"([{"role":"user","content":[
      {"type":"text","text":"what is this?"},
      {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0K"}},
      {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}}]}])");
}

TEST(AnthropicRequest, ToolCallsAndMergedToolResults) {
  const auto d = upstreamBody(R"({"model":"m","messages":[
      {"role":"user","content":"weather in Paris and Rome?"},
      {"role":"assistant","content":"","tool_calls":[
        {"id":"toolu_1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Paris\"}"}},
        {"id":"toolu_2","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Rome\"}"}}]},
      {"role":"tool","tool_call_id":"toolu_1","content":"18C"},
      {"role":"tool","tool_call_id":"toolu_2","content":[{"type":"text","text":"22C"}]},
      {"role":"user","content":"and so?"}]})");
  expectJson(d["messages"], R"([
      {"role":"user","content":[{"type":"text","text":"weather in Paris and Rome?"}]},
      {"role":"assistant","content":[
        {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris"}},
        {"type":"tool_use","id":"toolu_2","name":"weather","input":{"city":"Rome"}}]},
      {"role":"user","content":[
        {"type":"tool_result","tool_use_id":"toolu_1","content":"18C"},
        {"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"22C"}]},
        {"type":"text","text":"and so?"}]}])");
}

TEST(AnthropicRequest, ConsecutiveSameRoleMessagesMerge) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"a"},
      {"role":"user","content":"b"},{"role":"assistant","content":"c"},
      {"role":"assistant","content":[{"type":"text","text":"d"}]},{"role":"user","content":"e"}]})");
  expectJson(d["messages"], R"([
      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
      {"role":"assistant","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]},
      {"role":"user","content":[{"type":"text","text":"e"}]}])");
}

TEST(AnthropicRequest, EmptyArgumentsAreAnEmptyInput) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"x"},
      {"role":"assistant","tool_calls":[{"id":"t","type":"function",
      "function":{"name":"now","arguments":""}}]}]})");
  expectJson(d["messages"][1]["content"][0]["input"], "{}");
}

TEST(AnthropicRequest, ToolsAndEachToolChoice) {
  const std::string head = R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"weather","description":"Weather now",
      "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},
      {"type":"function","function":{"name":"now"}}])";
  auto d = upstreamBody(head + "}");
  expectJson(d["tools"], R"([{"name":"weather","description":"Weather now",
      "input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
      {"name":"now","input_schema":{"type":"object"}}])");
  EXPECT_FALSE(d.HasMember("tool_choice"));

  const std::vector<std::pair<std::string, std::string>> cases{
      {R"("auto")", R"({"type":"auto"})"},
      {R"("required")", R"({"type":"any"})"},
      {R"("none")", R"({"type":"none"})"},
      {R"({"type":"function","function":{"name":"now"}})", R"({"type":"tool","name":"now"})"},
  };
  for (const auto& [choice, expected] : cases) {
    d = upstreamBody(head + R"(,"tool_choice":)" + choice + "}");
    expectJson(d["tool_choice"], expected);
  }
  d = upstreamBody(head + R"(,"parallel_tool_calls":false})");
  expectJson(d["tool_choice"], R"({"type":"auto","disable_parallel_tool_use":true})");
  d = upstreamBody(head + R"(,"tool_choice":"required","parallel_tool_calls":false})");
  expectJson(d["tool_choice"], R"({"type":"any","disable_parallel_tool_use":true})");
}

TEST(AnthropicRequest, ToolChoiceWithoutToolsIsNotSent) {
  const auto d = upstreamBody(
      R"({"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"none"})");
  EXPECT_FALSE(d.HasMember("tool_choice"));
  EXPECT_FALSE(d.HasMember("tools"));
}

TEST(AnthropicRequest, JsonSchemaIsAForcedTool) {
  std::string text = R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"person",
      "schema":{"type":"object","properties":{"name":{"type":"string"}}}}}})";
  const auto d = upstreamBody(text);
  EXPECT_STREQ(d["tools"][0]["name"].GetString(), "person");
  expectJson(d["tools"][0]["input_schema"],
             R"({"type":"object","properties":{"name":{"type":"string"}}})");
  expectJson(d["tool_choice"], R"({"type":"tool","name":"person"})");
  EXPECT_TRUE(wantsJson(decode(text)));

  const auto o = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_object"}})");
  expectJson(o["tools"][0]["input_schema"], R"({"type":"object"})");
  expectJson(o["tool_choice"], R"({"type":"tool","name":"json_object"})");
}

TEST(AnthropicRequest, RefusesWhatAnthropicCannotBeAsked) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {R"({"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant",
          "tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})",
       "messages"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"},{"role":"assistant",
          "tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{oops"}}]}]})",
       "messages"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"input_audio",
          "input_audio":{"data":"AAAA","format":"wav"}}]}]})",
       "messages"},
      {R"({"model":"m","messages":[{"role":"function","name":"f","content":"x"}]})", "messages"},
      {R"({"model":"m","messages":[{"role":"user","content":[{"type":"image_url",
          "image_url":{"url":"data:image/png,raw"}}]}]})",
       "messages"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"custom","custom":{"name":"x"}}]})",
       "tools"},
      {R"({"model":"m","messages":[{"role":"user","content":"x"}],
          "tools":[{"type":"function","function":{"name":"f"}}],
          "response_format":{"type":"json_object"}})",
       "response_format"},
  };
  for (const auto& [request, param] : cases) {
    const Error e = refusal(request);
    EXPECT_EQ(e.kind, ErrorKind::InvalidValue) << request;
    EXPECT_EQ(e.param, param) << request;
    EXPECT_EQ(e.status(), 400);
  }
}

TEST(AnthropicResponse, TextAndUsageWithCacheTokens) {
  const auto c = message(R"({"id":"msg_01","type":"message","role":"assistant",
      "model":"claude","content":[{"type":"thinking","thinking":"hmm","signature":"s"},
      {"type":"text","text":"Hello"},{"type":"text","text":", world"}],
      "stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,
      "cache_creation_input_tokens":4,"cache_read_input_tokens":6,"output_tokens":7}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->id, "msg_01");
  EXPECT_EQ(c->upstream_model, "claude");
  EXPECT_EQ(c->created, 77);
  ASSERT_EQ(c->choices.size(), 1U);
  EXPECT_EQ(c->choices[0].content, "Hello, world");
  EXPECT_EQ(c->choices[0].finish_reason, "stop");
  EXPECT_TRUE(c->choices[0].tool_calls.empty());
  EXPECT_EQ(c->choices[0].reasoning_content, "hmm");
  ASSERT_TRUE(c->usage.has_value());
  EXPECT_EQ(c->usage->prompt_tokens, 20);
  EXPECT_EQ(c->usage->completion_tokens, 7);
  EXPECT_EQ(c->usage->cached_tokens, 6);
  EXPECT_EQ(c->usage->cache_write_tokens, 4);
  EXPECT_EQ(usage::total(*c->usage), 27);
}

TEST(AnthropicResponse, ToolUseBecomesToolCalls) {
  const auto c = message(R"({"id":"msg_02","type":"message","role":"assistant",
      "content":[{"type":"tool_use","id":"toolu_9","name":"weather","input":{"city":"Paris"}}],
      "stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const openai::Choice& ch = c->choices[0];
  EXPECT_FALSE(ch.content.has_value());
  EXPECT_EQ(ch.finish_reason, "tool_calls");
  ASSERT_EQ(ch.tool_calls.size(), 1U);
  EXPECT_EQ(ch.tool_calls[0].id, "toolu_9");
  EXPECT_EQ(ch.tool_calls[0].name, "weather");
  expectJson(parsed(ch.tool_calls[0].arguments), R"({"city":"Paris"})");
}

TEST(AnthropicResponse, JsonModeToolInputIsTheContent) {
  const auto c = message(R"({"id":"m","content":[{"type":"tool_use","id":"t","name":"person",
      "input":{"name":"Ada"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,
      "output_tokens":1}})",
                         true);
  ASSERT_TRUE(c.ok()) << c.error().message;
  expectJson(parsed(*c->choices[0].content), R"({"name":"Ada"})");
  EXPECT_TRUE(c->choices[0].tool_calls.empty());
  EXPECT_EQ(c->choices[0].finish_reason, "stop");
}

TEST(AnthropicResponse, EachStopReason) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"end_turn", "stop"},
      {"stop_sequence", "stop"},
      {"max_tokens", "length"},
      {"tool_use", "tool_calls"},
      {"refusal", "content_filter"},
      {"pause_turn", "stop"},
      {"model_context_window_exceeded", "length"},
  };
  for (const auto& [stop, finish] : cases) {
    const auto c = message(R"({"id":"m","content":[{"type":"text","text":"x"}],"stop_reason":")" +
                           stop + R"("})");
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_EQ(c->choices[0].finish_reason, finish) << stop;
  }
  EXPECT_EQ(finishReason("tool_use", true), "stop");
}

TEST(AnthropicResponse, KeepsRawPartsAndEncodes) {
  const std::string body = R"({"id":"m","content":[],"stop_reason":"end_turn",)"
                           R"("usage":{"input_tokens":1,"output_tokens":0}})";
  const auto c = message(body, false, {true, true});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->raw_response_json, body);
  expectJson(parsed(c->raw_usage_json), R"({"input_tokens":1,"output_tokens":0})");
  EXPECT_EQ(c->choices[0].content, "");
  openai::ResponseMeta meta;
  meta.model = "claude";
  const auto out = parsed(openai::encodeCompletion(*c, meta));
  EXPECT_STREQ(out["object"].GetString(), "chat.completion");
  EXPECT_STREQ(out["choices"][0]["message"]["role"].GetString(), "assistant");
}

TEST(AnthropicResponse, GarbageIsABadGateway) {
  for (const char* body : {"not json", "[]", R"({"id":"m"})", R"({"content":{}})"}) {
    const auto c = message(body);
    ASSERT_FALSE(c.ok()) << body;
    EXPECT_EQ(c.error().kind, ErrorKind::UpstreamError) << body;
  }
}

TEST(AnthropicErrors, ByStatusAndType) {
  struct Case {
    int status;
    std::string body;
    ErrorKind kind;
  };
  const auto body = [](std::string_view type) {
    return R"({"type":"error","error":{"type":")" + std::string(type) +
           R"(","message":"upstream says no"}})";
  };
  const std::vector<Case> cases{
      {400, body("invalid_request_error"), ErrorKind::UpstreamInvalidRequest},
      {404, body("not_found_error"), ErrorKind::UpstreamInvalidRequest},
      {413, body("request_too_large"), ErrorKind::UpstreamInvalidRequest},
      {401, body("authentication_error"), ErrorKind::UpstreamAuthFailed},
      {403, body("permission_error"), ErrorKind::UpstreamAuthFailed},
      {429, body("rate_limit_error"), ErrorKind::UpstreamRateLimited},
      {500, body("api_error"), ErrorKind::UpstreamError},
      {529, body("overloaded_error"), ErrorKind::UpstreamUnavailable},
      {504, body("timeout_error"), ErrorKind::UpstreamTimeout},
      {529, "<html>busy</html>", ErrorKind::UpstreamUnavailable},
      {503, "Service Unavailable", ErrorKind::UpstreamError},
      {429, "", ErrorKind::UpstreamRateLimited},
      {422, body("some_new_error"), ErrorKind::UpstreamInvalidRequest},
  };
  for (const Case& c : cases) {
    const Error e = translateError(c.status, c.body);
    EXPECT_EQ(e.kind, c.kind) << c.status << " " << c.body;
    EXPECT_FALSE(e.message.empty()) << c.status;
  }
  EXPECT_EQ(translateError(400, body("invalid_request_error")).message, "upstream says no");
}

TEST(AnthropicErrors, CredentialsAndRawBytesAreNotEchoed) {
  const Error auth = translateError(
      401,
      R"({"type":"error","error":{"type":"authentication_error","message":"bad key sk-ant-secret"}})");
  EXPECT_EQ(auth.message.find("sk-ant"), std::string::npos);
  const Error raw = translateError(502, std::string("\x01\xff") + std::string(5000, 'a'));
  EXPECT_EQ(raw.message.find('\x01'), std::string::npos);
  EXPECT_LT(raw.message.size(), 300U);
}

const std::vector<std::pair<std::string, std::string>> kTextStream{
    {"message_start", R"({"type":"message_start","message":{"id":"msg_s1","type":"message",
      "role":"assistant","content":[],"model":"claude","stop_reason":null,
      "usage":{"input_tokens":25,"cache_read_input_tokens":5,"output_tokens":1}}})"},
    {"content_block_start",
     R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"},
    {"ping", R"({"type": "ping"})"},
    {"content_block_delta",
     R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}})"},
    {"content_block_delta",
     R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo \"q\"\n"}})"},
    {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
    {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn",
      "stop_sequence":null},"usage":{"output_tokens":15}})"},
    {"message_stop", R"({"type":"message_stop"})"},
};

TEST(AnthropicStream, TextAnswer) {
  const Streamed s = run(kTextStream, meta(true));
  ASSERT_FALSE(s.error) << s.error->message;
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.chunks.size(), 5U);
  for (const auto& c : s.chunks) {
    EXPECT_STREQ(c["id"].GetString(), "msg_s1");
    EXPECT_STREQ(c["object"].GetString(), "chat.completion.chunk");
    EXPECT_EQ(c["created"].GetInt(), 42);
    EXPECT_STREQ(c["model"].GetString(), "claude");
  }
  expectJson(s.chunks[0]["choices"], R"([{"index":0,"delta":{"role":"assistant","content":""},
      "logprobs":null,"finish_reason":null}])");
  expectJson(s.chunks[1]["choices"][0]["delta"], R"({"content":"Hel"})");
  expectJson(s.chunks[2]["choices"][0]["delta"], R"({"content":"lo \"q\"\n"})");
  expectJson(s.chunks[3]["choices"], R"([{"index":0,"delta":{},"logprobs":null,
      "finish_reason":"stop"}])");
  EXPECT_EQ(s.chunks[4]["choices"].Size(), 0U);
  expectJson(s.chunks[4]["usage"], R"({"prompt_tokens":30,"completion_tokens":15,
      "total_tokens":45,"prompt_tokens_details":{"cached_tokens":5,"audio_tokens":0}})");
  ASSERT_TRUE(s.usage);
  EXPECT_EQ(usage::total(*s.usage), 45);
}

TEST(AnthropicStream, FastContentChunksEqualEncodedOnes) {
  // A text delta is written between a precomputed head and tail; it must be exactly what
  // encodeChunk writes.
  openai::ResponseMeta m = meta(false);
  m.model = "a \"quoted\" \"content\":\"x\" model";
  StreamDecoder decoder(m, false, 42);
  std::string out;
  std::optional<openai::Usage> usage;
  std::string start = kTextStream[0].second;
  EXPECT_EQ(decoder.model(), "");
  ASSERT_TRUE(decoder.event("message_start", start, out, usage).ok());
  EXPECT_EQ(decoder.model(), "claude");  // The upstream's, not the one our chunks name.
  out.clear();
  std::string delta = kTextStream[4].second;
  ASSERT_TRUE(decoder.event("content_block_delta", delta, out, usage).ok());
  openai::Chunk c;
  c.id = "msg_s1";
  c.created = 42;
  openai::ChoiceDelta d;
  d.content = "lo \"q\"\n";
  c.choices.push_back(d);
  EXPECT_EQ(out, openai::sseData(openai::encodeChunk(c, m)));
}

TEST(AnthropicStream, UsageChunkOnlyWhenAsked) {
  const Streamed s = run(kTextStream, meta(false));
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.chunks.size(), 4U);
  for (const auto& c : s.chunks) {
    EXPECT_FALSE(c.HasMember("usage"));
  }
  ASSERT_TRUE(s.usage);  // Still tracked, for billing.
  EXPECT_EQ(s.usage->prompt_tokens, 30);
  EXPECT_EQ(s.usage->completion_tokens, 15);
}

TEST(AnthropicStream, ToolCall) {
  const Streamed s = run(
      {
          {"message_start", R"({"type":"message_start","message":{"id":"msg_t","usage":
            {"input_tokens":9,"output_tokens":1}}})"},
          {"content_block_start", R"({"type":"content_block_start","index":0,
            "content_block":{"type":"text","text":""}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":0,
            "delta":{"type":"text_delta","text":"Let me check."}})"},
          {"content_block_stop", R"({"type":"content_block_stop","index":0})"},
          {"content_block_start", R"({"type":"content_block_start","index":1,
            "content_block":{"type":"tool_use","id":"toolu_a","name":"weather","input":{}}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":1,
            "delta":{"type":"input_json_delta","partial_json":""}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":1,
            "delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Pa"}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":1,
            "delta":{"type":"input_json_delta","partial_json":"ris\"}"}})"},
          {"content_block_stop", R"({"type":"content_block_stop","index":1})"},
          {"content_block_start", R"({"type":"content_block_start","index":2,
            "content_block":{"type":"tool_use","id":"toolu_b","name":"now","input":{}}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":2,
            "delta":{"type":"input_json_delta","partial_json":"{}"}})"},
          {"content_block_stop", R"({"type":"content_block_stop","index":2})"},
          {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},
            "usage":{"output_tokens":30}})"},
          {"message_stop", R"({"type":"message_stop"})"},
      },
      meta(false));
  ASSERT_FALSE(s.error) << s.error->message;
  EXPECT_TRUE(s.complete);
  ASSERT_EQ(s.chunks.size(), 9U);
  expectJson(s.chunks[1]["choices"][0]["delta"], R"({"content":"Let me check."})");
  expectJson(s.chunks[2]["choices"][0]["delta"], R"({"tool_calls":[{"index":0,"id":"toolu_a",
      "type":"function","function":{"name":"weather","arguments":""}}]})");
  expectJson(s.chunks[3]["choices"][0]["delta"],
             R"({"tool_calls":[{"index":0,"function":{"arguments":""}}]})");
  expectJson(s.chunks[4]["choices"][0]["delta"],
             R"({"tool_calls":[{"index":0,"function":{"arguments":"{\"city\": \"Pa"}}]})");
  expectJson(s.chunks[5]["choices"][0]["delta"],
             R"({"tool_calls":[{"index":0,"function":{"arguments":"ris\"}"}}]})");
  expectJson(s.chunks[6]["choices"][0]["delta"], R"({"tool_calls":[{"index":1,"id":"toolu_b",
      "type":"function","function":{"name":"now","arguments":""}}]})");
  expectJson(s.chunks[7]["choices"][0]["delta"],
             R"({"tool_calls":[{"index":1,"function":{"arguments":"{}"}}]})");
  EXPECT_STREQ(s.chunks[8]["choices"][0]["finish_reason"].GetString(), "tool_calls");
  EXPECT_EQ(s.usage->completion_tokens, 30);
}

TEST(AnthropicStream, JsonModeStreamsTheToolInputAsContent) {
  const Streamed s = run(
      {
          {"message_start", R"({"type":"message_start","message":{"id":"m"}})"},
          {"content_block_start", R"({"type":"content_block_start","index":0,
            "content_block":{"type":"tool_use","id":"t","name":"person","input":{}}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":0,
            "delta":{"type":"input_json_delta","partial_json":"{\"name\":"}})"},
          {"content_block_delta", R"({"type":"content_block_delta","index":0,
            "delta":{"type":"input_json_delta","partial_json":"\"Ada\"}"}})"},
          {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"tool_use"}})"},
          {"message_stop", R"({"type":"message_stop"})"},
      },
      meta(false), true);
  ASSERT_FALSE(s.error) << s.error->message;
  ASSERT_EQ(s.chunks.size(), 4U);
  EXPECT_STREQ(s.chunks[1]["choices"][0]["delta"]["content"].GetString(), "{\"name\":");
  EXPECT_STREQ(s.chunks[2]["choices"][0]["delta"]["content"].GetString(), "\"Ada\"}");
  EXPECT_STREQ(s.chunks[3]["choices"][0]["finish_reason"].GetString(), "stop");
}

TEST(AnthropicStream, ErrorEvents) {
  const std::string start = R"({"type":"message_start","message":{"id":"m"}})";
  const std::vector<std::pair<std::string, ErrorKind>> cases{
      {"overloaded_error", ErrorKind::UpstreamUnavailable},
      {"api_error", ErrorKind::UpstreamError},
      {"rate_limit_error", ErrorKind::UpstreamRateLimited},
  };
  for (const auto& [type, kind] : cases) {
    const Streamed s =
        run({{"message_start", start},
             {"error", R"({"type":"error","error":{"type":")" + type + R"(","message":"busy"}})"}},
            meta(false));
    ASSERT_TRUE(s.error) << type;
    EXPECT_EQ(s.error->kind, kind) << type;
    EXPECT_FALSE(s.complete);
  }
}

TEST(AnthropicStream, MalformedEventsAreBadGateways) {
  const std::string start = R"({"type":"message_start","message":{"id":"m"}})";
  const std::vector<std::vector<std::pair<std::string, std::string>>> cases{
      {{"message_start", "{not json"}},
      {{"message_start", "[1]"}},
      {{"message_start", R"({"type":"message_start"})"}},
      {{"content_block_delta", R"({"type":"content_block_delta","index":0,
        "delta":{"type":"text_delta","text":"early"}})"}},
      {{"message_start", start}, {"message_start", start}},
      {{"message_start", start}, {"content_block_delta", R"({"type":"content_block_delta"})"}},
      {{"message_start", start}, {"content_block_delta", R"({"type":"content_block_delta","index":0,
        "delta":{"type":"text_delta","text":7}})"}},
      {{"message_start", start}, {"content_block_delta", R"({"type":"content_block_delta","index":3,
        "delta":{"type":"input_json_delta","partial_json":"{"}})"}},
      {{"message_start", start}, {"content_block_start", R"({"type":"content_block_start"})"}},
      // No tool block is open: a delta claiming index -1 must not pass as one.
      {{"message_start", start},
       {"content_block_delta", R"({"type":"content_block_delta","index":-1,
        "delta":{"type":"input_json_delta","partial_json":"{"}})"}},
      {{"message_start", start}, {"content_block_start", R"({"type":"content_block_start",
        "index":-1,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}})"}},
      {{"message_start", start}, {"content_block_start", R"({"type":"content_block_start",
        "index":4294967296,"content_block":{"type":"tool_use","id":"t","name":"f","input":{}}})"}},
      {{"message_start", start}, {"message_delta", R"({"type":"message_delta"})"}},
      {{"message_start", start}, {"error", R"({"type":"error"})"}},
  };
  for (const auto& events : cases) {
    const Streamed s = run(events, meta(false));
    ASSERT_TRUE(s.error) << events.back().second;
    EXPECT_EQ(s.error->kind, ErrorKind::UpstreamError) << events.back().second;
  }
}

TEST(AnthropicStream, UsageWithoutThePromptsCountIsMissing) {
  // No usage in message_start, only output_tokens later: the prompt is not known to be 0.
  const Streamed s =
      run({{"message_start", R"({"type":"message_start","message":{"id":"m"}})"},
           {"message_delta", R"({"type":"message_delta","delta":{"stop_reason":"end_turn"},)"
                             R"("usage":{"output_tokens":9}})"},
           {"message_stop", R"({"type":"message_stop"})"}},
          meta(true));
  EXPECT_TRUE(s.complete);
  EXPECT_FALSE(s.usage.has_value());
}

TEST(AnthropicExchange, RequestHeadersAndBody) {
  std::string text = R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})";
  const openai::ChatRequest req = decode(text);
  const config::Provider p = provider();
  const openai::ResponseMeta m = meta(false);
  auto exchange = anthropicAdapter().chat(req, p, m);
  ASSERT_NE(exchange, nullptr);
  const UpstreamRequest r = exchange->request().value();
  EXPECT_EQ(r.path, "/v1/messages");
  EXPECT_EQ(r.method, "POST");
  const std::vector<std::pair<std::string, std::string>> expected{
      {"Accept", "text/event-stream"},
      {"x-api-key", "sk-ant-secret"},
      {"anthropic-version", "2023-06-01"},
  };
  EXPECT_EQ(r.headers, expected);
  EXPECT_STREQ(parsed(r.body)["model"].GetString(), "claude-upstream");
  EXPECT_EQ(anthropicAdapter().embed({}, p), nullptr);
}

TEST(AnthropicExchange, UntranslatableRequestAnswersWithItsOwnError) {
  std::string text = R"({"model":"m","messages":[{"role":"user","content":"x"},
      {"role":"assistant","tool_calls":[{"id":"t","type":"function",
      "function":{"name":"f","arguments":"not json"}}]}]})";
  const openai::ChatRequest req = decode(text);
  const config::Provider p = provider();
  const openai::ResponseMeta m = meta(false);
  auto exchange = anthropicAdapter().chat(req, p, m);
  const auto r = exchange->request();  // Nothing is sent.
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidValue);
  EXPECT_EQ(r.error().param, "messages");
}

}  // namespace
}  // namespace tollgate::providers::anthropic
