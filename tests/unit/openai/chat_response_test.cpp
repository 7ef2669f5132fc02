#include "openai/chat_response.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace tollgate::openai {
namespace {

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

const ResponseMeta kMeta{"gpt_4o_mini", "0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b",
                         "auto",        false,
                         false,         false,
                         std::nullopt,  ""};

TEST(EncodeCompletion, HasTheSpecShape) {
  Completion c;
  c.id = "chatcmpl-1";
  c.created = 42;
  c.choices.push_back(
      {0, "tool_calls", std::nullopt, std::nullopt, {{"call_1", "f", "{}"}}, "", std::nullopt});
  c.usage = usage::of(3, 4);
  const auto d = parse(encodeCompletion(c, kMeta));
  EXPECT_STREQ(d["object"].GetString(), "chat.completion");
  EXPECT_STREQ(d["model"].GetString(), "gpt_4o_mini");
  EXPECT_STREQ(d["episode_id"].GetString(), kMeta.episode_id.c_str());
  EXPECT_STREQ(d["system_fingerprint"].GetString(), "tollgate");
  EXPECT_STREQ(d["service_tier"].GetString(), "auto");
  const auto& msg = d["choices"][0]["message"];
  EXPECT_STREQ(msg["role"].GetString(), "assistant");
  EXPECT_TRUE(msg["content"].IsNull());
  EXPECT_STREQ(msg["tool_calls"][0]["type"].GetString(), "function");
  EXPECT_STREQ(msg["tool_calls"][0]["function"]["name"].GetString(), "f");
  EXPECT_EQ(d["usage"]["total_tokens"].GetInt(), 7);
  EXPECT_FALSE(d.HasMember("tollgate::raw_usage"));
}

TEST(EncodeCompletion, RawUsageAndResponseOnRequest) {
  Completion c;
  c.choices.push_back({0, "stop", "hi", std::nullopt, {}, "", std::nullopt});
  c.raw_usage_json = R"({"prompt_tokens":1,"cached":0})";
  c.raw_response_json = R"({"id":"x"})";
  ResponseMeta meta = kMeta;
  meta.include_raw_usage = true;
  meta.include_raw_response = true;
  const auto d = parse(encodeCompletion(c, meta));
  EXPECT_EQ(d["tollgate::raw_usage"]["cached"].GetInt(), 0);
  EXPECT_STREQ(d["tollgate::raw_response"]["id"].GetString(), "x");
}

TEST(EncodeChunk, DeltaShape) {
  Chunk c;
  c.id = "chatcmpl-1";
  ChoiceDelta d;
  d.content = "He";
  ToolCallDelta t;
  t.index = 0;
  t.id = "call_1";
  t.name = "f";
  t.arguments = "";
  d.tool_calls.push_back(t);
  c.choices.push_back(d);
  const auto doc = parse(encodeChunk(c, kMeta));
  EXPECT_STREQ(doc["object"].GetString(), "chat.completion.chunk");
  EXPECT_STREQ(doc["choices"][0]["delta"]["content"].GetString(), "He");
  EXPECT_TRUE(doc["choices"][0]["finish_reason"].IsNull());
  EXPECT_STREQ(doc["choices"][0]["delta"]["tool_calls"][0]["type"].GetString(), "function");
  EXPECT_FALSE(doc.HasMember("usage"));
}

}  // namespace
}  // namespace tollgate::openai
