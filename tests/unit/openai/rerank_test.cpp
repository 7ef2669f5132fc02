#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/ids.hpp"
#include "openai/rerank_request.hpp"
#include "openai/rerank_response.hpp"
#include "rejected.hpp"

namespace tollgate::openai {
namespace {

/// `{"model":"r","query":"q","documents":["a","b"],EXTRA}`.
std::string body(std::string_view extra) {
  std::string b = R"({"model":"r","query":"q","documents":["a","b"])";
  if (!extra.empty()) {
    b += "," + std::string(extra);
  }
  return b + "}";
}

/// `{"model":"r","query":"q","documents":DOCUMENTS}`.
std::string withDocuments(std::string_view documents) {
  return R"({"model":"r","query":"q","documents":)" + std::string(documents) + "}";
}

/// A JSON array of `n` copies of `item`.
std::string arrayOf(std::size_t n, std::string_view item) {
  std::string out = "[";
  for (std::size_t i = 0; i < n; ++i) {
    out += (i ? "," : "") + std::string(item);
  }
  return out + "]";
}

/// The request and the text it was parsed from, which it points into.
struct Decoded {
  std::unique_ptr<std::string> text;
  Result<RerankRequest> result;
};

Decoded decode(std::string text) {
  auto owned = std::make_unique<std::string>(std::move(text));
  auto result = decodeRerankRequest(*owned);
  return Decoded{std::move(owned), std::move(result)};
}

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

class RejectedRerankRequests : public testing::TestWithParam<Rejected> {};

TEST_P(RejectedRerankRequests, NameTheParameter) {
  const Rejected& c = GetParam();
  const Decoded d = decode(c.body);
  ASSERT_FALSE(d.result.ok()) << c.body;
  expectRefusal(d.result.error(), c);
}

INSTANTIATE_TEST_SUITE_P(
    All, RejectedRerankRequests,
    testing::Values(
        Rejected{"malformed_json", R"({"model":)", ErrorKind::InvalidJson, ""},
        Rejected{"duplicate_key", R"({"model":"r","query":"q","query":"p","documents":[]})",
                 ErrorKind::InvalidJson, "query"},
        Rejected{"not_an_object", R"("r")", ErrorKind::InvalidType, ""},
        Rejected{"missing_model", R"({"query":"q","documents":["a"]})", ErrorKind::MissingParameter,
                 "model"},
        Rejected{"missing_query", R"({"model":"r","documents":["a"]})", ErrorKind::MissingParameter,
                 "query"},
        Rejected{"missing_documents", R"({"model":"r","query":"q"})", ErrorKind::MissingParameter,
                 "documents"},
        Rejected{"null_documents", R"({"model":"r","query":"q","documents":null})",
                 ErrorKind::MissingParameter, "documents"},
        Rejected{"empty_model", R"({"model":"","query":"q","documents":[]})",
                 ErrorKind::InvalidValue, "model"},
        Rejected{"empty_query", R"({"model":"r","query":"","documents":[]})",
                 ErrorKind::InvalidValue, "query"},
        Rejected{"model_number", R"({"model":1,"query":"q","documents":[]})",
                 ErrorKind::InvalidType, "model"},
        Rejected{"query_object", R"({"model":"r","query":{"text":"q"},"documents":[]})",
                 ErrorKind::InvalidType, "query"},
        Rejected{"documents_string", withDocuments(R"("a")"), ErrorKind::InvalidType, "documents"},
        Rejected{"document_number", withDocuments(R"(["a",1])"), ErrorKind::InvalidType,
                 "documents[1]"},
        Rejected{"document_null", withDocuments("[null]"), ErrorKind::InvalidType, "documents[0]"},
        Rejected{"object_without_text", withDocuments(R"(["a",{"title":"t"}])"),
                 ErrorKind::MissingParameter, "documents[1].text"},
        Rejected{"text_not_a_string", withDocuments(R"([{"text":5}])"), ErrorKind::InvalidType,
                 "documents[0].text"},
        Rejected{"documents_10001", withDocuments(arrayOf(10'001, R"("d")")),
                 ErrorKind::InvalidValue, "documents"},
        Rejected{"top_n_zero", body(R"("top_n":0)"), ErrorKind::InvalidValue, "top_n"},
        Rejected{"top_n_negative", body(R"("top_n":-1)"), ErrorKind::InvalidValue, "top_n"},
        Rejected{"top_n_fraction", body(R"("top_n":1.5)"), ErrorKind::InvalidType, "top_n"},
        Rejected{"top_n_string", body(R"("top_n":"1")"), ErrorKind::InvalidType, "top_n"},
        Rejected{"top_n_2_31", body(R"("top_n":2147483648)"), ErrorKind::InvalidValue, "top_n"},
        Rejected{"max_chunks_zero", body(R"("max_chunks_per_doc":0)"), ErrorKind::InvalidValue,
                 "max_chunks_per_doc"},
        Rejected{"return_documents_string", body(R"("return_documents":"true")"),
                 ErrorKind::InvalidType, "return_documents"},
        Rejected{"return_documents_number", body(R"("return_documents":1)"), ErrorKind::InvalidType,
                 "return_documents"},
        Rejected{"dryrun_string", body(R"("tollgate::dryrun":"yes")"), ErrorKind::InvalidType,
                 "tollgate::dryrun"},
        Rejected{"cache_options_array", body(R"("tollgate::cache_options":[])"),
                 ErrorKind::InvalidType, "tollgate::cache_options"},
        Rejected{"tags_string", body(R"("tollgate::tags":"a")"), ErrorKind::InvalidTags,
                 "tollgate::tags"},
        Rejected{"deny_unknown", body(R"("zeta":1,"alpha":2,"tollgate::deny_unknown_fields":true)"),
                 ErrorKind::UnknownParameter, "alpha"}),
    [](const testing::TestParamInfo<Rejected>& info) { return info.param.name; });

TEST(RerankRequest, StringsAndTextObjects) {
  const Decoded d = decode(withDocuments(R"(["plain",{"text":"boxed","title":"t"},"last"])"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->model, "r");
  EXPECT_EQ(d.result->query, "q");
  const std::vector<std::string_view> expected{"plain", "boxed", "last"};
  EXPECT_EQ(d.result->texts, expected);
  EXPECT_FALSE(d.result->top_n.has_value());
  EXPECT_FALSE(d.result->return_documents);
  EXPECT_FALSE(d.result->dryrun);
}

TEST(RerankRequest, EscapedTextIsUnescaped) {
  const Decoded d = decode(withDocuments(R"(["a\"b\u00e9"])"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  ASSERT_EQ(d.result->texts.size(), 1u);
  EXPECT_EQ(d.result->texts[0], "a\"b\xc3\xa9");
}

TEST(RerankRequest, EmptyDocumentsAreAccepted) {
  const Decoded d = decode(withDocuments("[]"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_TRUE(d.result->texts.empty());
}

TEST(RerankRequest, TenThousandDocumentsAreAccepted) {
  const Decoded d = decode(withDocuments(arrayOf(10'000, R"("d")")));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->texts.size(), 10'000u);
}

TEST(RerankRequest, OptionalFields) {
  const Decoded d =
      decode(body(R"("top_n":1,"return_documents":true,"max_chunks_per_doc":10,)"
                  R"("tollgate::dryrun":true,"tollgate::tags":{"k":"v"},)"
                  R"("tollgate::cache_options":{},"tollgate::deny_unknown_fields":true)"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->top_n, 1);
  EXPECT_TRUE(d.result->return_documents);
  EXPECT_TRUE(d.result->dryrun);
  const Tags expected{{"k", "v"}};
  EXPECT_EQ(d.result->tags, expected);
}

TEST(RerankRequest, NullFieldsAreNotGiven) {
  const Decoded d = decode(body(R"("top_n":null,"return_documents":null,"tollgate::tags":null)"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_FALSE(d.result->top_n.has_value());
  EXPECT_FALSE(d.result->return_documents);
}

TEST(RerankRequest, UnknownFieldsAcceptedUnlessDenied) {
  EXPECT_TRUE(decode(body(R"("rank_fields":["text"])")).result.ok());
  EXPECT_TRUE(
      decode(body(R"("rank_fields":["text"],"tollgate::deny_unknown_fields":false)")).result.ok());
  const Decoded d = decode(body(R"("rank_fields":["text"],"tollgate::deny_unknown_fields":true)"));
  ASSERT_FALSE(d.result.ok());
  EXPECT_EQ(d.result.error().kind, ErrorKind::UnknownParameter);
  EXPECT_EQ(d.result.error().param, "rank_fields");
}

/// A request for `texts`, built without decoding.
RerankRequest requestFor(std::vector<std::string_view> texts, std::optional<int> top_n = {},
                         bool return_documents = false) {
  RerankRequest r;
  r.model = "r";
  r.query = "q";
  r.texts = std::move(texts);
  r.top_n = top_n;
  r.return_documents = return_documents;
  return r;
}

/// (index, relevance_score) of each result, in order.
std::vector<std::pair<int, double>> resultsOf(const rapidjson::Document& d) {
  std::vector<std::pair<int, double>> out;
  for (const auto& r : d["results"].GetArray()) {
    out.emplace_back(r["index"].GetInt(), r["relevance_score"].GetDouble());
  }
  return out;
}

using Ranked = std::vector<std::pair<int, double>>;

TEST(EncodeRerank, SortsByScoreDescendingKeepingTiesInOrder) {
  const RerankRequest req = requestFor({"a", "b", "c", "d"});
  const auto d = parse(encodeRerank("rr-1", {{0, 0.1}, {1, 0.9}, {2, 0.5}, {3, 0.5}}, req,
                                    std::nullopt, std::nullopt));
  EXPECT_STREQ(d["id"].GetString(), "rr-1");
  EXPECT_EQ(resultsOf(d), (Ranked{{1, 0.9}, {2, 0.5}, {3, 0.5}, {0, 0.1}}));
  EXPECT_FALSE(d["results"][0].HasMember("document"));
}

TEST(EncodeRerank, TopNCutsAfterSorting) {
  const std::vector<RerankResult> results{{0, 0.1}, {1, 0.9}, {2, 0.5}};
  EXPECT_EQ(resultsOf(parse(encodeRerank("x", results, requestFor({"a", "b", "c"}, 2), std::nullopt,
                                         std::nullopt))),
            (Ranked{{1, 0.9}, {2, 0.5}}));
  EXPECT_EQ(resultsOf(parse(encodeRerank("x", results, requestFor({"a", "b", "c"}, 3), std::nullopt,
                                         std::nullopt))),
            (Ranked{{1, 0.9}, {2, 0.5}, {0, 0.1}}));
  EXPECT_EQ(resultsOf(parse(encodeRerank("x", results, requestFor({"a", "b", "c"}, 50),
                                         std::nullopt, std::nullopt))),
            (Ranked{{1, 0.9}, {2, 0.5}, {0, 0.1}}));
}

TEST(EncodeRerank, DocumentTextOnlyWhenAsked) {
  const auto d = parse(encodeRerank("x", {{0, 0.2}, {1, 0.8}},
                                    requestFor({"first", "second"}, std::nullopt, true),
                                    std::nullopt, std::nullopt));
  ASSERT_EQ(d["results"].Size(), 2u);
  EXPECT_STREQ(d["results"][0]["document"]["text"].GetString(), "second");
  EXPECT_STREQ(d["results"][1]["document"]["text"].GetString(), "first");
}

TEST(EncodeRerank, MetaHasVersionSearchUnitsTokensAndCost) {
  const money::Prices prices = money::flatPrices(*money::parseUsd("0.000002"), 0);
  const money::Pricing pricing{&prices, *money::parseUsd("1")};
  const auto d = parse(encodeRerank("x", {{0, 1.0}}, requestFor({"a"}), usage::of(12, 0), pricing));
  const auto& meta = d["meta"];
  EXPECT_STREQ(meta["api_version"]["version"].GetString(), "2");
  EXPECT_EQ(meta["billed_units"]["search_units"].GetInt(), 1);
  EXPECT_EQ(meta["tokens"]["input_tokens"].GetInt(), 12);
  ASSERT_TRUE(meta.HasMember("tollgate::cost"));
  EXPECT_DOUBLE_EQ(meta["tollgate::cost"].GetDouble(), 0.000024);
}

TEST(EncodeRerank, NoTokensOrCostWithoutUsage) {
  const money::Prices prices = money::flatPrices(1, 0);
  const money::Pricing pricing{&prices, 100};
  const auto d = parse(encodeRerank("x", {}, requestFor({"a"}), std::nullopt, pricing));
  EXPECT_FALSE(d["meta"].HasMember("tokens"));
  EXPECT_FALSE(d["meta"].HasMember("tollgate::cost"));
  const auto unpriced =
      parse(encodeRerank("x", {}, requestFor({"a"}), usage::of(1, 0), std::nullopt));
  EXPECT_TRUE(unpriced["meta"].HasMember("tokens"));
  EXPECT_FALSE(unpriced["meta"].HasMember("tollgate::cost"));
}

TEST(EncodeRerank, OneSearchUnitPerHundredDocumentsRoundedUp) {
  const std::vector<std::pair<std::size_t, int>> cases{{0, 0},   {1, 1},   {99, 1},  {100, 1},
                                                       {101, 2}, {200, 2}, {201, 3}, {10'000, 100}};
  for (const auto& [documents, units] : cases) {
    const RerankRequest req = requestFor(std::vector<std::string_view>(documents, "d"));
    const auto d = parse(encodeRerank("x", {}, req, std::nullopt, std::nullopt));
    EXPECT_EQ(d["meta"]["billed_units"]["search_units"].GetInt(), units) << documents;
  }
}

/// What rewriteRerank made of `upstream`.
struct Rewritten {
  Result<std::string> body;
  std::optional<Usage> usage;
};

Rewritten rewrite(std::string upstream, const RerankRequest& req,
                  const std::optional<money::Pricing>& pricing = std::nullopt) {
  std::optional<Usage> usage;
  auto body = rewriteRerank(upstream, req, pricing, usage);
  return Rewritten{std::move(body), usage};
}

TEST(RewriteRerank, SortsCutsAndKeepsTheId) {
  const Rewritten r =
      rewrite(R"({"id":"up-1","results":[{"index":0,"relevance_score":0.2},)"
              R"({"index":2,"relevance_score":0.7},{"index":1,"relevance_score":0.4}]})",
              requestFor({"a", "b", "c"}, 2, true));
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  EXPECT_STREQ(d["id"].GetString(), "up-1");
  EXPECT_EQ(resultsOf(d), (Ranked{{2, 0.7}, {1, 0.4}}));
  EXPECT_STREQ(d["results"][0]["document"]["text"].GetString(), "c");
  EXPECT_STREQ(d["results"][1]["document"]["text"].GetString(), "b");
  EXPECT_FALSE(r.usage.has_value());
  EXPECT_FALSE(d["meta"].HasMember("tokens"));
}

TEST(RewriteRerank, ScoreIsAcceptedForRelevanceScore) {
  const Rewritten r = rewrite(R"({"results":[{"index":0,"score":0.25},{"index":1,"score":-1}]})",
                              requestFor({"a", "b"}));
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  EXPECT_EQ(resultsOf(parse(*r.body)), (Ranked{{0, 0.25}, {1, -1.0}}));
}

TEST(RewriteRerank, RelevanceScoreWinsOverScore) {
  const Rewritten r =
      rewrite(R"({"results":[{"index":0,"relevance_score":0.9,"score":0.1}]})", requestFor({"a"}));
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  EXPECT_EQ(resultsOf(parse(*r.body)), (Ranked{{0, 0.9}}));
}

TEST(RewriteRerank, MakesAnIdWhenTheUpstreamGaveNone) {
  for (const char* upstream : {R"({"results":[]})", R"({"id":"","results":[]})"}) {
    const Rewritten r = rewrite(upstream, requestFor({"a"}));
    ASSERT_TRUE(r.body.ok()) << r.body.error().message;
    EXPECT_TRUE(ids::isUuid(parse(*r.body)["id"].GetString())) << upstream;
  }
}

struct ReportedTokens {
  std::string name;
  std::string extra;  ///< Members after "results".
  std::optional<std::int64_t> tokens;
};

void PrintTo(const ReportedTokens& c, std::ostream* os) { *os << c.name; }

class RerankTokens : public testing::TestWithParam<ReportedTokens> {};

TEST_P(RerankTokens, AreReadFromWhereEachUpstreamPutsThem) {
  const ReportedTokens& c = GetParam();
  const money::Prices prices = money::flatPrices(*money::parseUsd("0.000001"), 0);
  const money::Pricing pricing{&prices, *money::parseUsd("1")};
  const Rewritten r = rewrite(R"({"results":[{"index":0,"relevance_score":1}])" + c.extra + "}",
                              requestFor({"a"}), pricing);
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  if (!c.tokens) {
    EXPECT_FALSE(r.usage.has_value());
    EXPECT_FALSE(d["meta"].HasMember("tokens"));
    EXPECT_FALSE(d["meta"].HasMember("tollgate::cost"));
    return;
  }
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, *c.tokens);
  EXPECT_EQ(r.usage->completion_tokens, 0);
  EXPECT_EQ(usage::total(*r.usage), *c.tokens);
  EXPECT_EQ(d["meta"]["tokens"]["input_tokens"].GetInt64(), *c.tokens);
  EXPECT_DOUBLE_EQ(d["meta"]["tollgate::cost"].GetDouble(),
                   static_cast<double>(*c.tokens) * 0.000001);
}

INSTANTIATE_TEST_SUITE_P(
    All, RerankTokens,
    testing::Values(
        ReportedTokens{"none", "", std::nullopt},
        ReportedTokens{"usage_prompt_tokens", R"(,"usage":{"prompt_tokens":11,"total_tokens":99})",
                       11},
        ReportedTokens{"usage_total_tokens", R"(,"usage":{"total_tokens":12})", 12},
        ReportedTokens{"meta_billed_units", R"(,"meta":{"billed_units":{"input_tokens":13}})", 13},
        ReportedTokens{"meta_tokens", R"(,"meta":{"tokens":{"input_tokens":14}})", 14},
        ReportedTokens{"usage_before_meta",
                       R"(,"usage":{"total_tokens":15},"meta":{"tokens":{"input_tokens":1}})", 15},
        ReportedTokens{"meta_without_tokens", R"(,"meta":{"billed_units":{"search_units":1}})",
                       std::nullopt},
        ReportedTokens{"usage_not_object", R"(,"usage":5)", std::nullopt},
        ReportedTokens{"usage_tokens_string", R"(,"usage":{"prompt_tokens":"5"})", std::nullopt},
        ReportedTokens{"usage_tokens_negative", R"(,"usage":{"prompt_tokens":-5})", std::nullopt},
        ReportedTokens{"meta_tokens_negative", R"(,"meta":{"tokens":{"input_tokens":-1}})",
                       std::nullopt}),
    [](const testing::TestParamInfo<ReportedTokens>& info) { return info.param.name; });

struct Malformed {
  std::string name;
  std::string body;
};

void PrintTo(const Malformed& c, std::ostream* os) { *os << c.name; }

class MalformedUpstreamRerank : public testing::TestWithParam<Malformed> {};

TEST_P(MalformedUpstreamRerank, IsAnUpstreamError) {
  const Rewritten r = rewrite(GetParam().body, requestFor({"a", "b"}, std::nullopt, true));
  ASSERT_FALSE(r.body.ok()) << GetParam().body;
  EXPECT_EQ(r.body.error().kind, ErrorKind::UpstreamError) << r.body.error().message;
}

INSTANTIATE_TEST_SUITE_P(
    All, MalformedUpstreamRerank,
    testing::Values(
        Malformed{"not_json", "upstream exploded"},
        Malformed{"array", R"([{"index":0,"relevance_score":1}])"},
        Malformed{"no_results", R"({"data":[]})"}, Malformed{"results_object", R"({"results":{}})"},
        Malformed{"result_number", R"({"results":[1]})"},
        Malformed{"no_index", R"({"results":[{"relevance_score":1}]})"},
        Malformed{"index_string", R"({"results":[{"index":"0","relevance_score":1}]})"},
        Malformed{"index_negative", R"({"results":[{"index":-1,"relevance_score":1}]})"},
        Malformed{"index_past_the_end", R"({"results":[{"index":2,"relevance_score":1}]})"},
        Malformed{"index_huge",
                  R"({"results":[{"index":9223372036854775807,"relevance_score":1}]})"},
        Malformed{"no_score", R"({"results":[{"index":0}]})"},
        Malformed{"score_string", R"({"results":[{"index":0,"relevance_score":"1"}]})"},
        Malformed{"relevance_score_null_with_score",
                  R"({"results":[{"index":0,"relevance_score":null,"score":1}]})"}),
    [](const testing::TestParamInfo<Malformed>& info) { return info.param.name; });

}  // namespace
}  // namespace tollgate::openai
