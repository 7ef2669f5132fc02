// A client's cache_control breakpoints sent to Anthropic on the same blocks, and the ones
// Anthropic could not take refused before anything is sent.
#include <gtest/gtest.h>

#include <string>

#include "providers/anthropic/cache_control.hpp"
#include "providers/anthropic_fixtures.hpp"

namespace tollgate::providers::anthropic {
namespace {

using namespace test;  // The fixtures of these tests.

constexpr const char* kTool = R"({"type":"function","function":{"name":"f","parameters":
    {"type":"object"}},"cache_control":{"type":"ephemeral","ttl":"1h"}})";

TEST(AnthropicCacheControl, OnTheSystemBlockATextOrImagePartAndATool) {
  const auto d = upstreamBody(R"({"model":"m","messages":[
      {"role":"system","content":[{"type":"text","text":"rules","cache_control":
        {"type":"ephemeral"}}]},
      {"role":"user","content":[{"type":"text","text":"long document","cache_control":
        {"type":"ephemeral","ttl":"5m"}},{"type":"image_url","image_url":
        {"url":"https://x/cat.png"},"cache_control":{"type":"ephemeral"}},
        {"type":"text","text":"question"}]}],
      "tools":[)" + std::string(kTool) +
                              "]}");
  expectJson(d["system"],
             R"([{"type":"text","text":"rules","cache_control":{"type":"ephemeral"}}])");
  expectJson(d["messages"], R"([{"role":"user","content":[
      {"type":"text","text":"long document","cache_control":{"type":"ephemeral","ttl":"5m"}},
      {"type":"image","source":{"type":"url","url":"https://x/cat.png"},
       "cache_control":{"type":"ephemeral"}},
      {"type":"text","text":"question"}]}])");
  expectJson(d["tools"], R"([{"name":"f","input_schema":{"type":"object"},
      "cache_control":{"type":"ephemeral","ttl":"1h"}}])");
}

TEST(AnthropicCacheControl, InToolResultsAndNullIsNone) {
  const auto d = upstreamBody(R"({"model":"m","messages":[
      {"role":"user","content":[{"type":"text","text":"a","cache_control":null}]},
      {"role":"assistant","tool_calls":[{"id":"t1","type":"function",
        "function":{"name":"f","arguments":"{}"}}]},
      {"role":"tool","tool_call_id":"t1","content":[{"type":"text","text":"result",
        "cache_control":{"type":"ephemeral","ttl":null}}]}]})");
  expectJson(d["messages"][0]["content"], R"([{"type":"text","text":"a"}])");
  expectJson(d["messages"][2]["content"], R"([{"type":"tool_result","tool_use_id":"t1",
      "content":[{"type":"text","text":"result","cache_control":{"type":"ephemeral"}}]}])");
}

TEST(AnthropicCacheControl, AStringContentHasNowhereToCarryIt) {
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":"hi",
      "cache_control":{"type":"ephemeral"}}]})");
  expectJson(d["messages"], R"([{"role":"user","content":[{"type":"text","text":"hi"}]}])");
}

TEST(AnthropicCacheControl, RefusesWhatAnthropicCannotTake) {
  const auto part = [](const std::string& control) {
    return R"({"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a",
        "cache_control":)" +
           control + "}]}]}";
  };
  for (const char* control : {R"("ephemeral")", R"({})", R"({"type":"persistent"})",
                              R"({"type":"ephemeral","ttl":"2h"})", R"({"type":"ephemeral",
                              "ttl":300})",
                              R"({"type":"ephemeral","scope":"org"})", "[]", "true"}) {
    const Error e = refusal(part(control));
    EXPECT_EQ(e.kind, ErrorKind::InvalidValue) << control;
    EXPECT_EQ(e.param, "messages") << control;
  }
  const Error tool = refusal(R"({"model":"m","messages":[{"role":"user","content":"a"}],
      "tools":[{"type":"function","function":{"name":"f"},"cache_control":{"type":"x"}}]})");
  EXPECT_EQ(tool.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(tool.param, "tools");
}

TEST(AnthropicCacheControl, AtMostFourBreakpoints) {
  const std::string marked = R"({"type":"text","text":"a","cache_control":{"type":"ephemeral"}})";
  const std::string three = marked + "," + marked + "," + marked;
  const auto d = upstreamBody(R"({"model":"m","messages":[{"role":"user","content":[)" + three +
                              "]}],\"tools\":[" + kTool + "]}");
  EXPECT_EQ(d["messages"][0]["content"].Size(), 3U);
  const Error tools = refusal(R"({"model":"m","messages":[{"role":"user","content":[)" + three +
                              "]}],\"tools\":[" + kTool + "," + kTool + "]}");
  EXPECT_EQ(tools.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(tools.param, "tools");
  EXPECT_NE(tools.message.find("at most 4"), std::string::npos) << tools.message;
  const Error parts =
      refusal(R"({"model":"m","messages":[{"role":"system","content":[)" + marked +
              "]},{\"role\":\"user\",\"content\":[" + three + "," + marked + "]}]}");
  EXPECT_EQ(parts.kind, ErrorKind::InvalidValue);
  EXPECT_EQ(parts.param, "messages");
}

}  // namespace
}  // namespace tollgate::providers::anthropic
