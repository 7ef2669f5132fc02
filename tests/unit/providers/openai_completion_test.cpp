#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <limits>
#include <string>

#include "core/json.hpp"
#include "providers/openai/completion.hpp"

namespace tollgate::providers {
namespace {

openai::ResponseMeta meta() {
  return openai::ResponseMeta{"gpt_4o_mini", "ep-1", "auto", false, false, false, std::nullopt, ""};
}

struct Spliced {
  Result<std::string> body;
  std::optional<openai::Usage> usage;
  std::string model;
};

Spliced splice(const std::string& body, const openai::ResponseMeta& m = meta()) {
  Spliced s{std::string(), std::nullopt, {}};
  s.body = spliceCompletion(body, m, s.usage, s.model);
  return s;
}

rapidjson::Document parsed(const std::string& text) {
  rapidjson::Document d;
  EXPECT_FALSE(json::parse(d, text)) << text;
  return d;
}

/// The text of the value of `body`'s top-level member `name`, as written.
std::string rawMember(const std::string& body, std::string_view name) {
  const rapidjson::Document d = parsed(body);
  return json::serialize(d[std::string(name).c_str()]);
}

TEST(SpliceCompletion, ReadsChoicesToolCallsAndUsage) {
  const auto c = splice(R"({"id":"chatcmpl-9","created":5,"system_fingerprint":"fp",
      "choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant",
      "content":null,"tool_calls":[{"id":"call_1","type":"function",
      "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}}],
      "usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}})");
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  const rapidjson::Document d = parsed(*c.body);
  EXPECT_EQ(json::view(d["id"]), "chatcmpl-9");
  EXPECT_EQ(d["created"].GetInt(), 5);
  EXPECT_EQ(json::view(d["system_fingerprint"]), "fp");
  const auto& message = d["choices"][0]["message"];
  EXPECT_TRUE(message["content"].IsNull());
  EXPECT_EQ(json::view(message["tool_calls"][0]["function"]["arguments"]), "{\"city\":\"Paris\"}");
  ASSERT_TRUE(c.usage);
  EXPECT_EQ(usage::total(*c.usage), 15);
  EXPECT_FALSE(d.HasMember("tollgate::raw_usage"));
  EXPECT_FALSE(d.HasMember("tollgate::raw_response"));
}

TEST(SpliceCompletion, WritesOurMembersInOurEncodersOrder) {
  openai::ResponseMeta m = meta();
  m.variant_name = "concise";
  const auto c = splice(R"({"object":"x","model":"upstream-model","vendor_top":1,"id":"c1",)"
                        R"("created":7,"choices":[{"message":{"content":"hi"}}],"service_tier":)"
                        R"("scale","usage":{"prompt_tokens":1,"completion_tokens":1}})",
                        m);
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  // As openai::encodeCompletion writes them, in its order; the upstream's other top-level
  // members, as a stream's, are not ours to relay.
  EXPECT_EQ(*c.body,
            R"({"id":"c1","object":"chat.completion","created":7,"model":"gpt_4o_mini",)"
            R"("episode_id":"ep-1","variant_name":"concise","system_fingerprint":"tollgate",)"
            R"("service_tier":"auto","choices":[{"message":{"content":"hi"}}],)"
            R"("usage":{"prompt_tokens":1,"completion_tokens":1}})");
}

TEST(SpliceCompletion, ReportsTheModelTheUpstreamNamedDecodedAndCut) {
  constexpr std::string_view kAnswer = R"("choices":[{"message":{"content":"hi"}}]})";
  EXPECT_EQ(splice(R"({"model":"gpt-4o-2024-08-06",)" + std::string(kAnswer)).model,
            "gpt-4o-2024-08-06");
  // Escapes decoded; the first of a repeated member (not refused: we do not relay it).
  EXPECT_EQ(splice(R"({"model":"a\u00e9\"b","model":"x",)" + std::string(kAnswer)).model,
            "a\u00e9\"b");
  // Not a string, or nested: none.
  EXPECT_EQ(splice(R"({"model":7,)" + std::string(kAnswer)).model, "");
  EXPECT_EQ(splice(R"({"x":{"model":"inner"},)" + std::string(kAnswer)).model, "");
  // At most 128 bytes, never half a character: 63 ASCII and 33 two-byte characters cut to 127.
  std::string long_model(63, 'm');
  for (int i = 0; i < 33; ++i) {
    long_model += "\u00e9";
  }
  const auto cut = splice(R"({"model":")" + long_model + "\",\n" + std::string(kAnswer)).model;
  EXPECT_EQ(cut.size(), 127U);
  EXPECT_EQ(cut, long_model.substr(0, 127));
}

TEST(SpliceCompletion, KeepsStringsWithEscapesAndLongRunsAsWritten) {
  const std::string content = R"("a long plain run of text, then \"quotes\", a \\ and \n, )"
                              R"(\u00e9 and é, \ud83d\ude00, and the end")";
  const auto c =
      splice(R"({"model":"m\u0031-plain-run-of-text","choices":[{"message":{"content":)" + content +
             "}}]}");
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  EXPECT_EQ(c.model, "m1-plain-run-of-text");
  EXPECT_NE(c.body->find(content), std::string::npos) << *c.body;
  EXPECT_EQ(json::view(parsed(*c.body)["choices"][0]["message"]["content"]),
            "a long plain run of text, then \"quotes\", a \\ and \n, \u00e9 and \u00e9, "
            "\U0001F600, and the end");
}

TEST(SpliceCompletion, KeepsEveryMemberOfEachChoiceAndMessageInOrder) {
  const std::string choices =
      R"([{"index":0,"message":{"role":"assistant","reasoning_content":"Let me think.",)"
      R"("content":"Hi","refusal":null,"annotations":[{"type":"url_citation","url_citation":)"
      R"({"url":"https://example.com","start_index":0,"end_index":2}}],"audio":null,)"
      R"("reasoning":"r","x_vendor":{"k":[1,2.5,true]}},"logprobs":null,"finish_reason":"stop",)"
      R"("stop_reason":null},{"index":1,"message":{"role":"assistant","content":"Yo",)"
      R"("refusal":"no"},"logprobs":{"content":[{"token":"Yo","logprob":-0.5}]},)"
      R"("finish_reason":"length","matched_stop":42}])";
  const auto c = splice(R"({"id":"c","choices":)" + choices + "}");
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  // Byte for byte: nothing dropped, added or moved.
  EXPECT_NE(c.body->find(R"("choices":)" + choices), std::string::npos) << *c.body;
  const rapidjson::Document d = parsed(*c.body);
  EXPECT_TRUE(d["choices"][0]["message"]["refusal"].IsNull());
  EXPECT_EQ(d["choices"][1]["matched_stop"].GetInt(), 42);
}

TEST(SpliceCompletion, KeepsTheUsageWholeWithOurCostAppended) {
  // 3 pUSD an uncached prompt token, 1 a cached one, 7 an output token.
  money::Prices prices = money::flatPrices(3, 7);
  prices.base.cached_input = 1;
  openai::ResponseMeta m = meta();
  m.pricing = money::Pricing{&prices, std::numeric_limits<money::Pico>::max()};
  const std::string usage =
      R"({"prompt_tokens":1000,"completion_tokens":40,"total_tokens":1040,)"
      R"("prompt_tokens_details":{"cached_tokens":600,"audio_tokens":0},)"
      R"("completion_tokens_details":{"reasoning_tokens":30,"audio_tokens":0,)"
      R"("accepted_prediction_tokens":0,"rejected_prediction_tokens":0},"vendor_extra":"x"})";
  const auto c = splice(R"({"choices":[{"message":{"content":"x"}}],"usage":)" + usage + "}", m);
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  ASSERT_TRUE(c.usage);
  EXPECT_EQ(c.usage->cached_tokens, 600);
  EXPECT_EQ(c.usage->reasoning_tokens, 30);
  EXPECT_TRUE(c.usage->prompt_details);
  EXPECT_TRUE(c.usage->completion_details);
  // 400 × 3 + 600 × 1 + 40 × 7 = 2080 pUSD.
  const std::string want =
      usage.substr(0, usage.size() - 1) + R"(,"tollgate::cost":0.00000000208})";
  // The upstream's bytes, then ours, as exact decimal text (a double would not keep it).
  EXPECT_NE(c.body->find(R"("usage":)" + want + "}"), std::string::npos) << *c.body;
}

TEST(SpliceCompletion, UsageThatIsNotCountsIsRelayedUnpricedAndMissing) {
  money::Prices prices = money::flatPrices(3, 7);
  openai::ResponseMeta m = meta();
  m.pricing = money::Pricing{&prices, std::numeric_limits<money::Pico>::max()};
  for (const std::string usage :
       {R"({})", R"({"total_tokens":9})", R"({"prompt_tokens":-3,"completion_tokens":1})",
        R"({"prompt_tokens":2,"completion_tokens":"1"})",
        R"({"prompt_tokens":2.5,"completion_tokens":1})",
        R"({"prompt_tokens":2,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":-1}})",
        R"({"prompt_tokens":2,"completion_tokens":1,)"
        R"("completion_tokens_details":{"reasoning_tokens":"1"}})"}) {
    const auto c =
        splice(R"({"choices":[{"index":0,"message":{"content":"x"}}],"usage":)" + usage + "}", m);
    ASSERT_TRUE(c.body.ok()) << usage;
    EXPECT_FALSE(c.usage) << usage;
    EXPECT_EQ(rawMember(*c.body, "usage"), usage);
  }
  const auto huge = splice(R"({"choices":[{"index":0,"message":{"content":"x"}}],)"
                           R"("usage":{"prompt_tokens":9223372036854775807,)"
                           R"("completion_tokens":9223372036854775807}})");
  ASSERT_TRUE(huge.body.ok());
  EXPECT_EQ(usage::total(*huge.usage), std::numeric_limits<std::int64_t>::max());
}

TEST(SpliceCompletion, WithoutAUsageObjectTheUsageIsZeros) {
  for (const std::string tail : {"", R"(,"usage":null)", R"(,"usage":[1])"}) {
    const auto c = splice(R"({"choices":[{"message":{"content":"x"}}])" + tail + "}");
    ASSERT_TRUE(c.body.ok()) << tail;
    EXPECT_FALSE(c.usage) << tail;
    EXPECT_EQ(rawMember(*c.body, "usage"),
              R"({"prompt_tokens":0,"completion_tokens":0,"total_tokens":0})");
  }
}

TEST(SpliceCompletion, KeepsRawPartsOnRequest) {
  openai::ResponseMeta m = meta();
  m.include_raw_usage = true;
  m.include_raw_response = true;
  const std::string body =
      R"({"id":"x","choices":[{"index":0,"message":{"content":"a\nb"}}],"usage":{"prompt_tokens":1,"cached_tokens":7}})";
  const auto c = splice(body, m);
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  EXPECT_EQ(rawMember(*c.body, "tollgate::raw_usage"), R"({"prompt_tokens":1,"cached_tokens":7})");
  EXPECT_TRUE(c.body->ends_with(R"(,"tollgate::raw_response":)" + body + "}")) << *c.body;
  EXPECT_EQ(json::view(parsed(*c.body)["choices"][0]["message"]["content"]), "a\nb");
}

TEST(SpliceCompletion, ABodyWrittenOverSeveralLinesIsValidOnOurs) {
  const auto c = splice(
      "{\n  \"id\" : \"c\",\r\n  \"choices\" :\n [ {\"message\": {\"content\": \"x\"}} ] ,\n"
      "  \"usage\": {\n \"prompt_tokens\": 2, \"completion_tokens\": 1\n}\n}\n");
  ASSERT_TRUE(c.body.ok()) << c.body.error().message;
  const rapidjson::Document d = parsed(*c.body);
  EXPECT_EQ(json::view(d["id"]), "c");
  EXPECT_EQ(json::view(d["choices"][0]["message"]["content"]), "x");
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetInt(), 2);
  ASSERT_TRUE(c.usage);
}

TEST(SpliceCompletion, GarbageIsABadGateway) {
  const std::string deep =
      "{\"choices\":[{\"message\":{\"a\":" + std::string(200, '[') + std::string(200, ']') + "}}]}";
  for (const std::string& body : {
           std::string("not json"),
           std::string("[]"),
           std::string(R"({"choices":[]})"),
           std::string(R"({"id":"x"})"),
           std::string(R"({"choices":{"0":{"message":{}}}})"),
           std::string(R"({"choices":[{"index":0}]})"),
           std::string(R"({"choices":[{"message":"hi"}]})"),
           std::string(R"({"choices":[{"message":null}]})"),
           std::string(R"({"choices":[false]})"),
           std::string(R"({"choices":[[]]})"),
           std::string(R"({"choices":[{"message":{}},{"index":1}]})"),
           std::string(R"({"choices":[{"message":{"tool_calls":[{"id":"c"}]}}]})"),
           std::string(R"({"choices":[{"message":{"tool_calls":[{"function":"f"}]}}]})"),
           std::string(R"({"choices":[{"message":{"tool_calls":[1]}}]})"),
           std::string(R"({"id":"a","choices":[{"message":{}}],"id":"b"})"),
           std::string(R"({"choices":[{"message":{}}],"usage":{"prompt_tokens":1},"usage":{}})"),
           std::string("{\"choices\":[{\"message\":{\"content\":\"\xff\"}}]}"),
           std::string("{\"choices\":[{\"message\":{\"\xc3\":1}}]}"),
           std::string(R"({"choices":[{"message":{"content":"\ud800"}}]})"),
           // Not UTF-8 after strings that were: in the block that ended them, after an escape,
           // as a lone low surrogate after a pair.
           std::string("{\"id\":\"x\",\"choices\":[{\"message\":{\"a\":\"b\",\"c\":\"\xff\"}}]}"),
           std::string("{\"choices\":[{\"message\":{\"content\":\"\\n\xc3\"}}]}"),
           std::string(R"({"choices":[{"message":{"content":"\ud83d\ude00\udc00"}}]})"),
           // A raw control byte, a NUL or the end inside a string, past a long plain run.
           std::string("{\"choices\":[{\"message\":{\"content\":\"plain text run\nx\"}}]}"),
           std::string(R"({"choices":[{"message":{"content":"plain text run)") + '\0' + "\"}}]}",
           std::string(R"({"choices":[{"message":{"content":"plain text run without an end)"),
           std::string(R"({"choices":[{"message":{}}]})") + std::string(1, '\0') + "{}",
           std::string(R"({"choices":[{"message":{}}]} x)"),
           deep,
           std::string(""),
       }) {
    const auto c = splice(body);
    ASSERT_FALSE(c.body.ok()) << testing::PrintToString(body);
    EXPECT_EQ(c.body.error().kind, ErrorKind::UpstreamError) << body;
    EXPECT_EQ(c.body.error().status(), 502) << body;
    EXPECT_FALSE(c.usage) << body;
  }
}

TEST(SpliceCompletion, SaysWhatIsWrongWithAChoice) {
  const auto message = [](const std::string& body) { return splice(body).body.error().message; };
  EXPECT_EQ(message(R"({"choices":[]})"), "the upstream answered with no choices");
  EXPECT_EQ(message(R"({"choices":[1]})"),
            "the upstream answered with a choice that is not an object");
  EXPECT_EQ(message(R"({"choices":[{"index":0}]})"),
            "the upstream answered with a choice without a message");
  EXPECT_EQ(message(R"({"choices":[{"message":{"tool_calls":[{}]}}]})"),
            "the upstream answered with a tool call without a function");
  EXPECT_EQ(message("{"), "the upstream answered with a body that is not a JSON object");
}

TEST(SpliceCompletion, ToolCallsNotInAnArrayAndNestedLookalikesAreNotChecked) {
  // As the decoder before it: only a message's tool_calls array is read for functions.
  for (const std::string& body : {
           std::string(R"({"choices":[{"message":{"tool_calls":null}}]})"),
           std::string(R"({"choices":[{"message":{"x":{"tool_calls":[1]}}}]})"),
           std::string(R"({"choices":[{"message":{},"logprobs":{"message":1}}]})"),
           std::string(R"({"choices":[{"message":{"tool_calls":[{"function":{}}]},)"
                       R"("x":{"message":2}}]})"),
       }) {
    EXPECT_TRUE(splice(body).body.ok()) << body;
  }
}

}  // namespace
}  // namespace tollgate::providers
