#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <limits>

#include "providers/openai/compatible.hpp"

namespace tollgate::providers {
namespace {

config::Provider provider() {
  config::Provider p;
  p.name = "primary";
  p.type = config::ProviderType::OpenAI;
  p.api_base.path = "/v1";
  p.model = "upstream-model";
  return p;
}

rapidjson::Document upstreamBody(std::string request) {
  auto req = openai::decodeChatRequest(request);
  EXPECT_TRUE(req.ok());
  rapidjson::Document d;
  const std::string b = buildChatBody(*req, provider());
  d.Parse(b.c_str());
  return d;
}

TEST(BuildChatBody, ForwardsKnownFieldsOnly) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
      "n":1,"service_tier":"flex","temperature":0.5,"stop":["x"],"tools":[{"type":"function"}],
      "max_tokens":100,"max_completion_tokens":40,"user":"u1","unknown_field":1,
      "tollgate::tags":{"a":"b"},"tollgate::dryrun":true,"seed":null})");
  EXPECT_STREQ(d["model"].GetString(), "upstream-model");
  EXPECT_EQ(d["messages"].Size(), 1U);
  EXPECT_DOUBLE_EQ(d["temperature"].GetDouble(), 0.5);
  EXPECT_STREQ(d["stop"][0].GetString(), "x");
  EXPECT_TRUE(d.HasMember("tools"));
  EXPECT_STREQ(d["user"].GetString(), "u1");
  EXPECT_EQ(d["max_completion_tokens"].GetInt(), 40);
  for (const char* absent : {"n", "service_tier", "max_tokens", "unknown_field", "tollgate::tags",
                             "tollgate::dryrun", "seed", "stream_options"}) {
    EXPECT_FALSE(d.HasMember(absent)) << absent;
  }
}

TEST(BuildChatBody, CopiesTheClientsBytesOrWritesTheSameValues) {
  std::string text = R"({"model":"m", "messages" : [{"role":"user","content":"caf\u00e9 \/ x"}],
      "tollgate::tags":{"a":"b"}, "temperature":1.50,"stop":null,"user":"u\"1"})";
  auto req = openai::decodeChatRequest(text);
  ASSERT_TRUE(req.ok());
  const std::string copied = buildChatBody(*req, provider());
  EXPECT_EQ(copied,
            R"({"model":"upstream-model","messages":[{"role":"user","content":"caf\u00e9 \/ x"}],)"
            R"("temperature":1.50,"user":"u\"1","max_completion_tokens":4096})");
  // A request whose body was built after decoding (a variant's) keeps no bytes: its document
  // is written, to the same values.
  req->sent_values.clear();
  const std::string written = buildChatBody(*req, provider());
  EXPECT_NE(written, copied);
  rapidjson::Document a;
  rapidjson::Document b;
  a.Parse(copied.c_str());
  b.Parse(written.c_str());
  EXPECT_TRUE(a == b) << written;
}

TEST(BuildChatBody, AlwaysSendsTheOutputLimitTheHoldCovers) {
  // No limit from the client: the model's default_max_tokens (4096 unless configured).
  auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(d["max_completion_tokens"].GetInt(), config::kDefaultMaxTokens);
  d = upstreamBody(R"({"model":"m","messages":[{"role":"user"}],"max_tokens":0})");
  EXPECT_EQ(d["max_completion_tokens"].GetInt(), 0);
  config::Provider capped = provider();
  capped.max_output_tokens = 100;
  capped.default_max_tokens = 60;
  std::string request = R"({"model":"m","messages":[{"role":"user"}],"max_tokens":5000})";
  auto req = openai::decodeChatRequest(request);
  ASSERT_TRUE(req.ok());
  d.Parse(buildChatBody(*req, capped).c_str());
  EXPECT_EQ(d["max_completion_tokens"].GetInt(), 100);
  req->max_completion_tokens.reset();
  d.Parse(buildChatBody(*req, capped).c_str());
  EXPECT_EQ(d["max_completion_tokens"].GetInt(), 60);
}

TEST(BuildChatBody, StreamingAlwaysAsksForUsage) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user"}],"stream":true,
      "stream_options":{"include_usage":false}})");
  EXPECT_TRUE(d["stream"].GetBool());
  EXPECT_TRUE(d["stream_options"]["include_usage"].GetBool());
}

// The parser works in place; this takes its input by value.
Result<std::optional<openai::Chunk>> chunk(std::string data, KeepRaw keep = {}) {
  return parseChunk(data, keep);
}

TEST(ChatPath, JoinsApiBase) { EXPECT_EQ(chatPath(provider()), "/v1/chat/completions"); }

TEST(ParseChunk, DoneUsageAndErrors) {
  const auto done = chunk("[DONE]");
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(done->has_value());

  const auto usage = chunk(
      R"({"id":"c","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}})");
  ASSERT_TRUE(usage.ok());
  EXPECT_TRUE((*usage)->choices.empty());
  EXPECT_EQ((*usage)->usage->completion_tokens, 2);

  const auto delta = chunk(
      R"({"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"finish_reason":null}]})",
      {false, true});
  ASSERT_TRUE(delta.ok());
  const auto& tc = (*delta)->choices.at(0).tool_calls.at(0);
  EXPECT_FALSE(tc.id.has_value());
  EXPECT_EQ(tc.arguments, "{\"ci");
  EXPECT_FALSE((*delta)->raw_chunk_json.empty());

  const auto err = chunk(R"({"error":{"message":"overloaded"}})");
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("overloaded"), std::string::npos);
  EXPECT_FALSE(chunk("{oops").ok());
}

TEST(OpenAiExchange, AStreamEventOfSeveralLinesKeepsEveryMember) {
  std::string request =
      R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})";
  const auto req = openai::decodeChatRequest(request);
  ASSERT_TRUE(req.ok());
  const config::Provider p = provider();
  const openai::ResponseMeta meta{"m", "ep", "auto", false, false, false, std::nullopt, ""};
  const auto exchange = openAiAdapter().chat(*req, p, meta);
  std::string data =
      "{\"id\":\"c\",\"choices\":\n[{\"index\":0,\"delta\":"
      "{\"reasoning_content\":\"think\"},\n\"stop_reason\":null}]}";
  std::string out;
  const auto done = exchange->event("", data, out);
  ASSERT_TRUE(done.ok()) << done.error().message;
  EXPECT_FALSE(*done);
  EXPECT_NE(out.find(R"([{"index":0,"delta":{"reasoning_content":"think"}, "stop_reason":null}])"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find('\n'), out.size() - 2) << out;
}

TEST(TranslateUpstreamError, MapsStatuses) {
  const std::string body = R"({"error":{"message":"slow down","type":"rate_limit"}})";
  const Error rate = translateUpstreamError(429, body);
  EXPECT_EQ(rate.kind, ErrorKind::UpstreamRateLimited);
  EXPECT_NE(rate.message.find("slow down"), std::string::npos);
  EXPECT_EQ(translateUpstreamError(400, body).kind, ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(translateUpstreamError(422, "x").kind, ErrorKind::UpstreamInvalidRequest);
  for (const int refused : {401, 403}) {
    // Our credentials were refused: a fixed message of ours, never the upstream's text.
    const Error auth = translateUpstreamError(refused, R"({"error":{"message":"key sk-x bad"}})");
    EXPECT_EQ(auth.kind, ErrorKind::UpstreamAuthFailed);
    EXPECT_EQ(auth.status(), 502);
    EXPECT_EQ(auth.message.find("sk-x"), std::string::npos);
  }
  EXPECT_EQ(translateUpstreamError(500, "<html>").kind, ErrorKind::UpstreamError);
  EXPECT_EQ(translateUpstreamError(503, "").status(), 502);
}

TEST(TranslateUpstreamError, NeverEchoesRawBytes) {
  // Found by fuzz_upstream_json: a non-JSON body was echoed raw, invalid UTF-8 included.
  const Error e = translateUpstreamError(502, "{\"x\":\"\xed\xa0\x80\"}\r\n<html>");
  EXPECT_EQ(e.message.find('\xed'), std::string::npos);
  EXPECT_NE(e.message.find("\\xed\\xa0\\x80"), std::string::npos) << e.message;
  EXPECT_EQ(e.message.find('\r'), std::string::npos);
}

}  // namespace
}  // namespace tollgate::providers
