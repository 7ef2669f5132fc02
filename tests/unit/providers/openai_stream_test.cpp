#include <gtest/gtest.h>

#include "providers/openai/stream.hpp"

namespace tollgate::providers {
namespace {

using Kind = ChunkRewriter::Kind;

openai::ResponseMeta meta(bool include_usage = false) {
  return openai::ResponseMeta{"gpt_4o_mini", "ep-1",        "auto",       false,
                              false,         include_usage, std::nullopt, ""};
}

struct Rewritten {
  Result<Kind> kind;
  std::string out;
  std::optional<openai::Usage> usage;
};

Rewritten rewrite(const openai::ResponseMeta& m, const std::string& data) {
  ChunkRewriter r(m);
  Rewritten w{Kind::Other, "", std::nullopt};
  w.kind = r.rewrite(data, w.out, w.usage);
  return w;
}

TEST(ChunkRewriter, CopiesTheUpstreamsFieldsAndWritesOurs) {
  const auto m = meta();
  const Rewritten w =
      rewrite(m, R"({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735689601,)"
                 R"("model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0b",)"
                 R"("choices":[{"index":0,"delta":{"content":"Hi \"you\""},"logprobs":null,)"
                 R"("finish_reason":null}],"obfuscation":"xyz"})");
  ASSERT_TRUE(w.kind.ok());
  EXPECT_EQ(*w.kind, Kind::Chunk);
  EXPECT_EQ(w.out,
            R"(data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735689601,)"
            R"("model":"gpt_4o_mini","episode_id":"ep-1","system_fingerprint":"fp_0b",)"
            R"("service_tier":"auto","choices":[{"index":0,"delta":{"content":"Hi \"you\""},)"
            R"("logprobs":null,"finish_reason":null}]})"
            "\n\n");
  EXPECT_FALSE(w.usage.has_value());
}

TEST(ChunkRewriter, MissingOrMistypedFieldsGetDefaults) {
  const auto m = meta();
  const Rewritten w = rewrite(m, R"({"id":7,"created":"soon","system_fingerprint":"",)"
                                 R"("choices":{"0":1}})");
  ASSERT_TRUE(w.kind.ok());
  EXPECT_EQ(w.out,
            R"(data: {"id":"","object":"chat.completion.chunk","created":0,"model":"gpt_4o_mini",)"
            R"("episode_id":"ep-1","system_fingerprint":"tollgate","service_tier":"auto",)"
            R"("choices":[]})"
            "\n\n");
}

TEST(ChunkRewriter, CarriageReturnsAroundTheColonAreNotPartOfTheValue) {
  const Rewritten w = rewrite(meta(true),
                              "{\"id\":\"c\",\"choices\"\r\r:\r[],"
                              "\"usage\"\r:\r{\"prompt_tokens\":1}}");
  ASSERT_TRUE(w.kind.ok());
  EXPECT_EQ(w.out,
            R"(data: {"id":"c","object":"chat.completion.chunk","created":0,"model":"gpt_4o_mini",)"
            R"("episode_id":"ep-1","system_fingerprint":"tollgate","service_tier":"auto",)"
            R"("choices":[],"usage":{"prompt_tokens":1}})"
            "\n\n");
}

TEST(ChunkRewriter, TheUsageChunkIsKeptOnlyWhenAskedForButAlwaysRead) {
  const std::string usage_chunk =
      R"({"id":"c","choices":[],"usage":{"prompt_tokens":421,"completion_tokens":24,)"
      R"("total_tokens":445,"prompt_tokens_details":{"cached_tokens":0}}})";
  const auto quiet = meta(false);
  const Rewritten dropped = rewrite(quiet, usage_chunk);
  EXPECT_EQ(*dropped.kind, Kind::UsageOnly);
  EXPECT_EQ(dropped.out, "");
  ASSERT_TRUE(dropped.usage.has_value());
  EXPECT_EQ(dropped.usage->prompt_tokens, 421);
  EXPECT_EQ(dropped.usage->completion_tokens, 24);
  EXPECT_EQ(usage::total(*dropped.usage), 445);

  const auto asked = meta(true);
  const Rewritten kept = rewrite(asked, usage_chunk);
  EXPECT_EQ(*kept.kind, Kind::Chunk);
  EXPECT_NE(kept.out.find(R"("choices":[],"usage":{"prompt_tokens":421,"completion_tokens":24,)"
                          R"("total_tokens":445,"prompt_tokens_details":{"cached_tokens":0}}})"),
            std::string::npos)
      << kept.out;

  // Usage on a chunk that also has choices: the choices go out, the usage only when asked.
  const std::string both = R"({"choices":[{"index":0,"delta":{}}],)"
                           R"("usage":{"prompt_tokens":1,"completion_tokens":2}})";
  const Rewritten partial = rewrite(quiet, both);
  EXPECT_EQ(*partial.kind, Kind::Chunk);
  EXPECT_EQ(partial.out.find("usage"), std::string::npos) << partial.out;
  EXPECT_EQ(usage::total(*partial.usage), 3);
}

TEST(ChunkRewriter, AStreamsUsageIsReadOnceAndShownOnce) {
  const auto m = meta(true);  // The rewriter keeps a reference.
  ChunkRewriter r(m);
  std::optional<openai::Usage> usage;
  std::string out;
  const std::string first = R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}})";
  const std::string again = R"({"choices":[],"usage":{"prompt_tokens":50,"completion_tokens":20}})";
  EXPECT_EQ(*r.rewrite(first, out, usage), Kind::Chunk);
  EXPECT_NE(out.find(R"("prompt_tokens":5)"), std::string::npos) << out;
  out.clear();
  EXPECT_EQ(*r.rewrite(again, out, usage), Kind::UsageOnly);
  EXPECT_TRUE(out.empty()) << out;
  EXPECT_EQ(usage->prompt_tokens, 5);
  // With choices, the choices go on without the repeated usage.
  const std::string both = R"({"choices":[{"index":0,"delta":{"content":"x"}}],)"
                           R"("usage":{"prompt_tokens":50,"completion_tokens":20}})";
  EXPECT_EQ(*r.rewrite(both, out, usage), Kind::Chunk);
  EXPECT_EQ(out.find("usage"), std::string::npos) << out;
  EXPECT_EQ(usage::total(*usage), 7);
}

TEST(ChunkRewriter, UsageThatIsNotCountsIsMissingNotZero) {
  // Each is charged as an answer without usage (estimated, flagged), never as 0 tokens.
  for (const std::string usage : {
           R"({})",
           R"({"total_tokens":500})",
           R"({"prompt_tokens":10})",
           R"({"prompt_tokens":"10","completion_tokens":5})",
           R"({"prompt_tokens":10,"completion_tokens":5.5})",
           R"({"prompt_tokens":-1,"completion_tokens":5})",
           R"({"prompt_tokens":10,"completion_tokens":18446744073709551615})",
           R"({"prompt_tokens":10,"completion_tokens":null})",
           R"({"prompt_tokens":10,"completion_tokens":{"n":5}})",
       }) {
    const Rewritten w = rewrite(meta(true), R"({"choices":[],"usage":)" + usage + "}");
    ASSERT_TRUE(w.kind.ok()) << usage;
    EXPECT_FALSE(w.usage) << usage;
  }
  // Counts from 2^32 up are counts (RapidJSON reports them apart from smaller ones).
  const Rewritten big = rewrite(
      meta(true), R"({"choices":[],"usage":{"prompt_tokens":4294967296,"completion_tokens":7}})");
  ASSERT_TRUE(big.usage);
  EXPECT_EQ(big.usage->prompt_tokens, 4294967296);
  EXPECT_EQ(usage::total(*big.usage), 4294967303);
}

TEST(ChunkRewriter, RawExtrasWhenAskedFor) {
  openai::ResponseMeta m{"m", "e", "auto", true, true, true, std::nullopt, ""};
  const std::string data = R"({"choices":[],"usage":{"prompt_tokens":1,"total_tokens":1}})";
  const Rewritten w = rewrite(m, data);
  EXPECT_NE(w.out.find(R"("tollgate::raw_usage":{"prompt_tokens":1,"total_tokens":1})"),
            std::string::npos)
      << w.out;
  EXPECT_NE(w.out.find(R"("tollgate::raw_response":)" + data + "}\n\n"), std::string::npos)
      << w.out;
}

TEST(ChunkRewriter, ErrorEventsAndMultiLineDataTakeTheSlowPath) {
  const auto m = meta();
  EXPECT_EQ(*rewrite(m, R"({"error":{"message":"overloaded"}})").kind, Kind::Error);
  EXPECT_EQ(*rewrite(m, "{\"choices\":\n[]}").kind, Kind::Other);
}

TEST(ChunkRewriter, RefusesWhatIsNotAValidJsonObject) {
  const auto m = meta();
  const std::string deep = "{\"a\":" + std::string(200, '[') + std::string(200, ']') + "}";
  for (const std::string& bad :
       {std::string("[1]"), std::string("\"x\""), std::string("{\"a\":1} x"),
        std::string("{\"a\":\"\xff\"}"), std::string("{\"\xc3\":1}"),
        std::string("{\"a\":\"\\ud800\"}"), std::string("{\"a\":1}\0{}", 10), deep,
        std::string("{\"a\":"), std::string(""), std::string(R"({"choices":[false]})"),
        std::string(R"({"choices":[[]]})"), std::string(R"({"id":"a","choices":[],"id":"b"})")}) {
    const Rewritten w = rewrite(m, bad);
    ASSERT_FALSE(w.kind.ok()) << testing::PrintToString(bad);
    EXPECT_EQ(w.kind.error().kind, ErrorKind::UpstreamError) << bad;
    EXPECT_EQ(w.out, "") << bad;
  }
}

TEST(OneLine, LineFeedsBetweenTokensBecomeSpacesAndTheRewriterTakesThem) {
  const std::string data =
      "{\"id\":\"c\",\n\"choices\":\n[{\"index\":0,\"delta\":"
      "{\"reasoning_content\":\"a \\\"b\\\" \\\\\"}}\n]}";
  const std::string flat = oneLine(data);
  EXPECT_EQ(flat,
            "{\"id\":\"c\", \"choices\": [{\"index\":0,\"delta\":"
            "{\"reasoning_content\":\"a \\\"b\\\" \\\\\"}} ]}");
  const Rewritten w = rewrite(meta(), flat);
  ASSERT_TRUE(w.kind.ok());
  EXPECT_EQ(*w.kind, Kind::Chunk);
  EXPECT_NE(w.out.find(R"("delta":{"reasoning_content":"a \"b\" \\"}})"), std::string::npos)
      << w.out;
}

TEST(OneLine, ALineFeedInsideAStringIsLeftForTheRewriterToRefuse) {
  for (const std::string& data :
       {std::string("{\"a\":\"x\ny\"}"), std::string("{\"a\":\"x\\\"\n\"}")}) {
    const std::string flat = oneLine(data);
    EXPECT_EQ(flat, data);
    EXPECT_EQ(*rewrite(meta(), flat).kind, Kind::Other);
  }
}

}  // namespace
}  // namespace tollgate::providers
