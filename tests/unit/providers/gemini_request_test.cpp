#include <gtest/gtest.h>

#include "providers/gemini/gemini.hpp"
#include "providers/gemini_fixtures.hpp"

namespace tollgate::providers::gemini {
namespace {

using namespace test;

rapidjson::Document body(std::string request) {
  auto b = built(std::move(request));
  EXPECT_TRUE(b.ok()) << (b.ok() ? "" : b.error().message);
  return parsedJson(b.ok() ? *b : "null");
}

Error refused(std::string request) {
  auto b = built(std::move(request));
  EXPECT_FALSE(b.ok());
  return b.ok() ? Error{ErrorKind::Internal, "", ""} : b.error();
}

TEST(GeminiRequest, PathsCarryTheModelAndTheMethod) {
  EXPECT_EQ(modelPath(geminiProvider(), "generateContent"),
            "/v1beta/models/gemini-upstream:generateContent");
  EXPECT_EQ(modelPath(geminiProvider(), "streamGenerateContent?alt=sse"),
            "/v1beta/models/gemini-upstream:streamGenerateContent?alt=sse");
}

TEST(GeminiRequest, TheKeyGoesInTheHeaderOnly) {
  UpstreamRequest r;
  withKey(r, geminiProvider());
  bool header = false;
  for (const auto& [name, value] : r.headers) {
    header = header || (name == "x-goog-api-key" && value == "goog-secret");
  }
  EXPECT_TRUE(header);
  EXPECT_EQ(r.path.find("key="), std::string::npos);
  EXPECT_EQ(r.body.find("goog-secret"), std::string::npos);
}

TEST(GeminiRequest, SystemTurnsAndGenerationConfig) {
  const auto d = body(R"({"model":"m","messages":[{"role":"system","content":"be brief"},
      {"role":"user","content":"hi"},{"role":"user","content":"again"},
      {"role":"assistant","content":"hello"},{"role":"user","content":"bye"}],
      "temperature":1.5,"top_p":0.9,"stop":["END"],"seed":3,"max_tokens":300,
      "presence_penalty":0.5,"user":"u","logprobs":true})");
  expectSameJson(d, R"({"contents":[
      {"role":"user","parts":[{"text":"hi"},{"text":"again"}]},
      {"role":"model","parts":[{"text":"hello"}]},
      {"role":"user","parts":[{"text":"bye"}]}],
      "systemInstruction":{"parts":[{"text":"be brief"}]},
      "generationConfig":{"maxOutputTokens":300,"temperature":1.5,"topP":0.9,
        "presencePenalty":0.5,"seed":3,"stopSequences":["END"]}})");
}

TEST(GeminiRequest, TheDefaultLimitIsSentAndZeroIsRefused) {
  EXPECT_EQ(body(R"({"model":"m","messages":[{"role":"user","content":"hi"}]})")["generationConfig"]
                                                                                ["maxOutputTokens"]
                                                                                    .GetInt(),
            2000);
  const Error e = refused(R"({"model":"m","messages":[{"role":"user","content":"hi"}],
      "max_completion_tokens":0})");
  EXPECT_EQ(e.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(e.param, "max_tokens");
}

TEST(GeminiRequest, DataImagesAreInlineAndUrlsAreRefused) {
  const auto d = body(R"({"model":"m","messages":[{"role":"user","content":[
      {"type":"text","text":"what?"},
      {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0K"}}]}]})");
  expectSameJson(d["contents"][0]["parts"], R"([{"text":"what?"},
      {"inlineData":{"mimeType":"image/png","data":"iVBORw0K"}}])");
  for (const char* url : {"https://example.com/cat.png", "http://127.0.0.1:9/x.png"}) {
    const Error e = refused(R"({"model":"m","messages":[{"role":"user","content":[
        {"type":"image_url","image_url":{"url":")" +
                            std::string(url) + R"("}}]}]})");
    EXPECT_EQ(e.kind, ErrorKind::InvalidValue);
    EXPECT_EQ(e.param, "messages");
  }
}

TEST(GeminiRequest, ToolsChoiceCallsAndResponsesByName) {
  const auto d = body(R"({"model":"m","messages":[{"role":"user","content":"weather?"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"call_0","type":"function",
        "function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]},
      {"role":"tool","tool_call_id":"call_0","content":"{\"temp\":3}"},
      {"role":"tool","tool_call_id":"call_0","content":"cold"}],
      "tools":[{"type":"function","function":{"name":"get_weather","description":"d",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}],
      "tool_choice":{"type":"function","function":{"name":"get_weather"}}})");
  expectSameJson(d["contents"], R"([{"role":"user","parts":[{"text":"weather?"}]},
      {"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Oslo"}}}]},
      {"role":"user","parts":[
        {"functionResponse":{"name":"get_weather","response":{"temp":3}}},
        {"functionResponse":{"name":"get_weather","response":{"content":"cold"}}}]}])");
  expectSameJson(d["tools"], R"([{"functionDeclarations":[{"name":"get_weather","description":"d",
      "parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}])");
  expectSameJson(d["toolConfig"], R"({"functionCallingConfig":{"mode":"ANY",
      "allowedFunctionNames":["get_weather"]}})");
}

TEST(GeminiRequest, AThoughtSignatureInACallsIdIsSentBack) {
  const auto d = body(R"({"model":"m","messages":[{"role":"user","content":"x"},
      {"role":"assistant","tool_calls":[{"id":"call_0__thought_signature__c2lnbmVk",
        "type":"function","function":{"name":"f","arguments":"{}"}},
        {"id":"call_1","type":"function","function":{"name":"g","arguments":""}}]},
      {"role":"tool","tool_call_id":"call_0__thought_signature__c2lnbmVk","content":"r"}]})");
  expectSameJson(d["contents"][1]["parts"],
                 R"([{"thoughtSignature":"c2lnbmVk","functionCall":{"name":"f","args":{}}},
                     {"functionCall":{"name":"g","args":{}}}])");
  EXPECT_STREQ(d["contents"][2]["parts"][0]["functionResponse"]["name"].GetString(), "f");
}

TEST(GeminiRequest, ToolChoiceModes) {
  const std::string head = R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":)";
  EXPECT_STREQ(
      body(head + R"("required"})")["toolConfig"]["functionCallingConfig"]["mode"].GetString(),
      "ANY");
  EXPECT_STREQ(body(head + R"("none"})")["toolConfig"]["functionCallingConfig"]["mode"].GetString(),
               "NONE");
  EXPECT_STREQ(body(head + R"("auto"})")["toolConfig"]["functionCallingConfig"]["mode"].GetString(),
               "AUTO");
  // No tools: no toolConfig.
  EXPECT_FALSE(body(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "tool_choice":"none"})")
                   .HasMember("toolConfig"));
}

TEST(GeminiRequest, AToolMessageAnsweringNoCallIsRefused) {
  const Error e = refused(R"({"model":"m","messages":[{"role":"user","content":"x"},
      {"role":"tool","tool_call_id":"call_9","content":"r"}]})");
  EXPECT_EQ(e.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(e.param, "messages");
}

TEST(GeminiRequest, JsonOutput) {
  auto d = body(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"s",
        "schema":{"type":"object","properties":{"a":{"type":"integer"}}}}}})");
  expectSameJson(d["generationConfig"], R"({"maxOutputTokens":2000,
      "responseMimeType":"application/json",
      "responseSchema":{"type":"object","properties":{"a":{"type":"integer"}}}})");
  d = body(R"({"model":"m","messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_object"}})");
  EXPECT_STREQ(d["generationConfig"]["responseMimeType"].GetString(), "application/json");
  EXPECT_FALSE(d["generationConfig"].HasMember("responseSchema"));
}

TEST(GeminiRequest, WhatGeminiCannotBeAskedIsRefused) {
  EXPECT_EQ(refused(R"({"model":"m","messages":[{"role":"user","content":[
      {"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]})")
                .param,
            "messages");
  EXPECT_EQ(refused(R"({"model":"m","messages":[{"role":"assistant","content":null,
      "tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]})")
                .param,
            "messages");
}

}  // namespace
}  // namespace tollgate::providers::gemini
