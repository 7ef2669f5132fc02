#include "openai/embedding_response.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/base64.hpp"

namespace tollgate::openai {
namespace {

rapidjson::Document parse(const std::string& s) {
  rapidjson::Document d;
  d.Parse(s.c_str());
  EXPECT_FALSE(d.HasParseError()) << s;
  return d;
}

/// The float32 values of a JSON array of numbers.
std::vector<float> floatsOf(const rapidjson::Value& v) {
  std::vector<float> out;
  for (const auto& x : v.GetArray()) {
    out.push_back(static_cast<float>(x.GetDouble()));
  }
  return out;
}

/// Bitwise equality, so that NaN payloads and the sign of zero count.
void expectSameBits(const std::vector<float>& actual, const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(std::bit_cast<std::uint32_t>(actual[i]), std::bit_cast<std::uint32_t>(expected[i]))
        << "at " << i << ": " << actual[i] << " vs " << expected[i];
  }
}

const money::Prices kPrices =
    money::flatPrices(*money::parseUsd("0.000001"), *money::parseUsd("0.000002"));
const money::Pricing kPricing{&kPrices, *money::parseUsd("1")};

TEST(FloatsToBase64, LittleEndianFloat32) {
  const std::vector<float> one{1.0f};
  EXPECT_EQ(floatsToBase64(one), "AACAPw==");  // 00 00 80 3F
  EXPECT_EQ(floatsToBase64(one), base64::encode(std::string("\x00\x00\x80\x3f", 4)));
  const std::vector<float> two{1.0f, -2.0f};  // -2.0f is C0000000
  EXPECT_EQ(floatsToBase64(two),
            base64::encode(std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8)));
  EXPECT_EQ(floatsToBase64(std::vector<float>{}), "");
}

TEST(Base64ToFloats, ReadsLittleEndianFloat32) {
  expectSameBits(*base64ToFloats("AACAPw=="), {1.0f});
  expectSameBits(*base64ToFloats(base64::encode(std::string("\x00\x00\x00\xc0", 4))), {-2.0f});
  EXPECT_EQ(base64ToFloats(""), std::vector<float>{});
}

TEST(Base64ToFloats, RoundTripsEveryKindOfFloat) {
  std::vector<float> values{0.0f,
                            -0.0f,
                            1.0f,
                            -1.0f,
                            0.1f,
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min() / 2,  // denormal
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::lowest(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  std::mt19937 gen(20240601);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  for (int i = 0; i < 1000; ++i) {
    values.push_back(dist(gen));
  }
  // Any bit pattern is a float32, so random ones cover every exponent.
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 1000; ++i) {
    values.push_back(std::bit_cast<float>(bits(gen)));
  }
  const auto decoded = base64ToFloats(floatsToBase64(values));
  ASSERT_TRUE(decoded.has_value());
  expectSameBits(*decoded, values);
}

TEST(Base64ToFloats, RefusesBadBase64AndPartialFloats) {
  for (const std::string& text : {
           std::string("AACAPw"),                           // unpadded
           std::string("AACA*w=="),                         // not the alphabet
           std::string("AACAPw==\n"),                       // trailing line break
           base64::encode(std::string("\x01", 1)),          // 1 byte
           base64::encode(std::string("\x01\x02", 2)),      // 2 bytes
           base64::encode(std::string("\x01\x02\x03", 3)),  // 3 bytes
           base64::encode(std::string(5, '\x01')),          // 5 bytes
           base64::encode(std::string(7, '\x01')),          // 7 bytes
       }) {
    EXPECT_FALSE(base64ToFloats(text).has_value()) << text;
  }
  EXPECT_TRUE(base64ToFloats(base64::encode(std::string(8, '\x01'))).has_value());
}

/// What rewriteEmbeddingList made of `upstream`.
struct Rewritten {
  Result<std::string> body;
  std::optional<Usage> usage;
};

Rewritten rewrite(std::string upstream, const EmbeddingMeta& meta) {
  std::optional<Usage> usage;
  auto body = rewriteEmbeddingList(upstream, meta, usage);
  return Rewritten{std::move(body), usage};
}

constexpr std::string_view kFloatList =
    R"({"object":"list","model":"text-embedding-3-small-upstream","data":[)"
    R"({"object":"embedding","index":0,"embedding":[0.5,-1.25,3]},)"
    R"({"object":"embedding","index":1,"embedding":[0.1,0,-0.000001]}],)"
    R"("usage":{"prompt_tokens":7,"total_tokens":7}})";

TEST(RewriteEmbeddingList, FloatsPassThroughWhenFloatsWereAsked) {
  const Rewritten r = rewrite(std::string(kFloatList), EmbeddingMeta{"client-model", false, {}, 2});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  EXPECT_STREQ(d["object"].GetString(), "list");
  EXPECT_STREQ(d["model"].GetString(), "client-model");
  ASSERT_EQ(d["data"].Size(), 2u);
  const auto& first = d["data"][0];
  EXPECT_STREQ(first["object"].GetString(), "embedding");
  EXPECT_EQ(first["index"].GetInt(), 0);
  ASSERT_TRUE(first["embedding"].IsArray());
  EXPECT_EQ(first["embedding"][0].GetDouble(), 0.5);
  EXPECT_EQ(first["embedding"][1].GetDouble(), -1.25);
  EXPECT_EQ(first["embedding"][2].GetDouble(), 3.0);
  // Passed through as the upstream wrote them, not narrowed to float32.
  EXPECT_EQ(d["data"][1]["index"].GetInt(), 1);
  EXPECT_EQ(d["data"][1]["embedding"][0].GetDouble(), 0.1);
  EXPECT_EQ(d["data"][1]["embedding"][2].GetDouble(), -0.000001);
}

TEST(RewriteEmbeddingList, FloatsAreCopiedDigitForDigit) {
  const std::string upstream =
      R"({"data":[{"embedding":[0.1000000000000000055511151231257827,-2.5E-3,1e2,-0]}]})";
  const Rewritten r = rewrite(upstream, EmbeddingMeta{"m", false, {}, 1});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  EXPECT_NE(r.body->find(R"("embedding":[0.1000000000000000055511151231257827,-2.5E-3,1e2,-0]})"),
            std::string::npos)
      << *r.body;
}

TEST(RewriteEmbeddingList, UsageThatIsNotACountIsMissing) {
  for (const std::string usage : {R"({})", R"({"prompt_tokens":"8"})", R"({"prompt_tokens":-8})",
                                  R"({"prompt_tokens":8.5})"}) {
    const Rewritten r = rewrite(R"({"data":[{"embedding":[1.5],"index":0}],"usage":)" + usage + "}",
                                EmbeddingMeta{"m", false, {}, 1});
    ASSERT_TRUE(r.body.ok()) << usage;
    EXPECT_FALSE(r.usage.has_value()) << usage;
  }
  // A lone total is the prompt's count: an embedding generates nothing.
  const Rewritten total = rewrite(R"({"data":[{"embedding":[1.5],"index":0}],)"
                                  R"("usage":{"total_tokens":6}})",
                                  EmbeddingMeta{"m", false, {}, 1});
  ASSERT_TRUE(total.usage.has_value());
  EXPECT_EQ(total.usage->prompt_tokens, 6);
}

// The total written is the sum of the counts the charge priced, not the upstream's own.
TEST(RewriteEmbeddingList, MembersMayComeInAnyOrderAndUnknownOnesAreDropped) {
  const std::string upstream =
      R"({"usage":{"total_tokens":9,"extra":{"a":[1,{"b":2}]},"prompt_tokens":8},)"
      R"("meta":{"data":[{"embedding":"not read"}]},"object":"list",)"
      R"("data":[{"embedding":[1.5],"extra":[[["x"]]],"index":0,"object":"embedding"}]})";
  const Rewritten r = rewrite(upstream, EmbeddingMeta{"m", false, {}, 1});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  EXPECT_EQ(*r.body,
            R"({"object":"list","data":[{"object":"embedding","index":0,"embedding":[1.5]}],)"
            R"("model":"m","usage":{"prompt_tokens":8,"total_tokens":8}})");
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 8);
}

TEST(RewriteEmbeddingList, RefusesTwoListsDeepNestingAndNul) {
  EXPECT_FALSE(rewrite(R"({"data":[],"data":[]})", EmbeddingMeta{"m", false, {}, 1}).body.ok());
  const std::string deep =
      R"({"data":[],"x":)" + std::string(200, '[') + std::string(200, ']') + "}";
  EXPECT_FALSE(rewrite(deep, EmbeddingMeta{"m", false, {}, 1}).body.ok());
  EXPECT_FALSE(rewrite(std::string(R"({"data":[]})") + '\0' + "x", EmbeddingMeta{"m", false, {}, 1})
                   .body.ok());
}

TEST(RewriteEmbeddingList, FloatsBecomeBase64WhenBase64WasAsked) {
  const Rewritten r = rewrite(std::string(kFloatList), EmbeddingMeta{"client-model", true, {}, 2});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  ASSERT_TRUE(d["data"][0]["embedding"].IsString());
  EXPECT_STREQ(d["data"][0]["embedding"].GetString(),
               floatsToBase64(std::vector<float>{0.5f, -1.25f, 3.0f}).c_str());
  expectSameBits(*base64ToFloats(d["data"][1]["embedding"].GetString()), {0.1f, 0.0f, -0.000001f});
}

TEST(RewriteEmbeddingList, Base64BecomesFloatsWhenFloatsWereAsked) {
  const std::vector<float> v{0.1f, -3.5f, 1e-40f, 65504.0f};
  const std::string upstream = R"({"data":[{"object":"embedding","index":0,"embedding":")" +
                               floatsToBase64(v) + R"("}],"model":"up"})";
  const Rewritten r = rewrite(upstream, EmbeddingMeta{"client-model", false, {}, 1});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  ASSERT_TRUE(d["data"][0]["embedding"].IsArray());
  expectSameBits(floatsOf(d["data"][0]["embedding"]), v);
}

TEST(RewriteEmbeddingList, Base64PassesThroughWhenBase64WasAsked) {
  const std::string b64 = floatsToBase64(std::vector<float>{1.0f, 2.0f});
  const std::string upstream = R"({"data":[{"index":0,"embedding":")" + b64 + R"("}]})";
  const Rewritten r = rewrite(upstream, EmbeddingMeta{"m", true, {}, 1});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  EXPECT_EQ(parse(*r.body)["data"][0]["embedding"].GetString(), b64);
}

TEST(RewriteEmbeddingList, MissingIndexIsThePosition) {
  const Rewritten r = rewrite(R"({"data":[{"embedding":[1]},{"embedding":[2]},{"embedding":[3]}]})",
                              EmbeddingMeta{"m", false, {}, 3});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  ASSERT_EQ(d["data"].Size(), 3u);
  for (rapidjson::SizeType i = 0; i < 3; ++i) {
    EXPECT_EQ(d["data"][i]["index"].GetInt(), static_cast<int>(i));
  }
}

TEST(RewriteEmbeddingList, ItemsArePlacedByTheirIndexNotWhereTheyCome) {
  const Rewritten r = rewrite(R"({"data":[{"index":2,"embedding":[3]},{"index":0,"embedding":[1]},)"
                              R"({"index":1,"embedding":[2]}]})",
                              EmbeddingMeta{"m", false, {}, 3});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  const auto d = parse(*r.body);
  ASSERT_EQ(d["data"].Size(), 3u);
  for (rapidjson::SizeType i = 0; i < 3; ++i) {
    EXPECT_EQ(d["data"][i]["index"].GetInt(), static_cast<int>(i));
    EXPECT_EQ(d["data"][i]["embedding"][0].GetDouble(), i + 1.0);
  }
}

TEST(RewriteEmbeddingList, IndexesThatAreNotOneForEachInputAreRefused) {
  // Two inputs sent: each case is a list whose indexes are not exactly {0, 1}.
  for (const std::string data : {
           R"([{"index":0,"embedding":[1]}])",                                      // too few
           R"([{"index":1,"embedding":[1]},{"index":1,"embedding":[2]}])",          // twice
           R"([{"index":0,"embedding":[1]},{"index":2,"embedding":[2]}])",          // past the end
           R"([{"index":-1,"embedding":[1]},{"index":0,"embedding":[2]}])",         // negative
           R"([{"index":0,"embedding":[1]},{"embedding":[2]},{"embedding":[3]}])",  // too many
           R"([{"embedding":[1]},{"index":0,"embedding":[2]}])",  // a position taken twice
           R"([{"index":1,"embedding":[1]}])",                    // one, at the wrong place
           R"([{"index":"1","embedding":[1]},{"index":"0","embedding":[2]}])",  // not numbers
           R"([{"index":1.0,"embedding":[1]},{"index":0,"embedding":[2]}])",
           R"([{"index":null,"embedding":[1]},{"index":0,"embedding":[2]}])",
           R"([{"index":[1],"embedding":[1]},{"index":0,"embedding":[2]}])",
       }) {
    const Rewritten r = rewrite(R"({"data":)" + data + "}", EmbeddingMeta{"m", false, {}, 2});
    ASSERT_FALSE(r.body.ok()) << data;
    EXPECT_EQ(r.body.error().kind, ErrorKind::UpstreamError) << data;
  }
}

TEST(RewriteEmbeddingList, UsageIsParsed) {
  const Rewritten r = rewrite(std::string(kFloatList), EmbeddingMeta{"m", false, {}, 2});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 7);
  EXPECT_EQ(r.usage->completion_tokens, 0);
  EXPECT_EQ(usage::total(*r.usage), 7);
  const auto d = parse(*r.body);
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetInt(), 7);
  EXPECT_EQ(d["usage"]["total_tokens"].GetInt(), 7);
}

TEST(RewriteEmbeddingList, TotalTokensDefaultToPromptTokens) {
  const Rewritten r = rewrite(R"({"data":[{"embedding":[1]}],"usage":{"prompt_tokens":4}})",
                              EmbeddingMeta{.inputs = 1});
  ASSERT_TRUE(r.body.ok()) << r.body.error().message;
  ASSERT_TRUE(r.usage.has_value());
  EXPECT_EQ(r.usage->prompt_tokens, 4);
  EXPECT_EQ(usage::total(*r.usage), 4);
}

TEST(RewriteEmbeddingList, NoUsageReportedLeavesUsageUnset) {
  for (const char* upstream :
       {R"({"data":[{"embedding":[1]}]})", R"({"data":[{"embedding":[1]}],"usage":null})",
        R"({"data":[{"embedding":[1]}],"usage":7})"}) {
    const Rewritten r = rewrite(upstream, EmbeddingMeta{"m", false, kPricing, 1});
    ASSERT_TRUE(r.body.ok()) << r.body.error().message;
    EXPECT_FALSE(r.usage.has_value()) << upstream;
    const auto d = parse(*r.body);
    EXPECT_EQ(d["usage"]["prompt_tokens"].GetInt(), 0) << upstream;
    EXPECT_EQ(d["usage"]["total_tokens"].GetInt(), 0) << upstream;
    EXPECT_FALSE(d["usage"].HasMember("tollgate::cost")) << upstream;
  }
}

TEST(RewriteEmbeddingList, CostOnlyWithPricingAndUsage) {
  const Rewritten unpriced = rewrite(std::string(kFloatList), EmbeddingMeta{"m", false, {}, 2});
  ASSERT_TRUE(unpriced.body.ok());
  EXPECT_FALSE(parse(*unpriced.body)["usage"].HasMember("tollgate::cost"));

  const Rewritten priced = rewrite(std::string(kFloatList), EmbeddingMeta{"m", false, kPricing, 2});
  ASSERT_TRUE(priced.body.ok());
  const auto d = parse(*priced.body);
  ASSERT_TRUE(d["usage"].HasMember("tollgate::cost"));
  ASSERT_TRUE(d["usage"]["tollgate::cost"].IsNumber());
  EXPECT_DOUBLE_EQ(d["usage"]["tollgate::cost"].GetDouble(), 0.000007);
}

struct Malformed {
  std::string name;
  std::string body;
};

void PrintTo(const Malformed& c, std::ostream* os) { *os << c.name; }

class MalformedUpstreamEmbeddings : public testing::TestWithParam<Malformed> {};

TEST_P(MalformedUpstreamEmbeddings, AreAnUpstreamError) {
  for (const bool base64 : {false, true}) {
    const Rewritten r = rewrite(GetParam().body, EmbeddingMeta{"m", base64, kPricing, 1});
    ASSERT_FALSE(r.body.ok()) << GetParam().body;
    EXPECT_EQ(r.body.error().kind, ErrorKind::UpstreamError) << r.body.error().message;
    EXPECT_FALSE(r.body.error().message.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, MalformedUpstreamEmbeddings,
    testing::Values(
        Malformed{"not_json", "<html>bad gateway</html>"}, Malformed{"truncated", R"({"data":[)"},
        Malformed{"empty", ""}, Malformed{"array", R"([{"embedding":[1]}])"},
        Malformed{"no_data", R"({"object":"list"})"}, Malformed{"data_object", R"({"data":{}})"},
        Malformed{"item_number", R"({"data":[1]})"},
        Malformed{"item_without_embedding", R"({"data":[{"index":0}]})"},
        Malformed{"embedding_number", R"({"data":[{"embedding":1}]})"},
        Malformed{"embedding_null", R"({"data":[{"embedding":null}]})"},
        Malformed{"embedding_holds_string", R"({"data":[{"embedding":[1,"2"]}]})"},
        Malformed{"embedding_holds_null", R"({"data":[{"embedding":[null]}]})"},
        Malformed{"embedding_bad_base64", R"({"data":[{"embedding":"AAC*Pw=="}]})"},
        Malformed{"embedding_three_bytes", R"({"data":[{"embedding":"AAAA"}]})"},
        // float32 -inf and NaN, in base64: no JSON number can say them.
        Malformed{"embedding_base64_infinity", R"({"data":[{"embedding":"AACA/w=="}]})"},
        Malformed{"embedding_base64_nan", R"({"data":[{"embedding":"AADAfw=="}]})"},
        Malformed{"second_item_bad", R"({"data":[{"embedding":[1]},{"embedding":true}]})"}),
    [](const testing::TestParamInfo<Malformed>& info) { return info.param.name; });

TEST(EncodeEmbeddingList, Floats) {
  const std::vector<std::vector<float>> vectors{{0.5f, -0.25f}, {1.0f}};
  const auto d =
      parse(encodeEmbeddingList(vectors, EmbeddingMeta{"m", false, {}, 2}, usage::of(3, 0)));
  EXPECT_STREQ(d["object"].GetString(), "list");
  EXPECT_STREQ(d["model"].GetString(), "m");
  ASSERT_EQ(d["data"].Size(), 2u);
  for (rapidjson::SizeType i = 0; i < 2; ++i) {
    EXPECT_STREQ(d["data"][i]["object"].GetString(), "embedding");
    EXPECT_EQ(d["data"][i]["index"].GetInt(), static_cast<int>(i));
    expectSameBits(floatsOf(d["data"][i]["embedding"]), vectors[i]);
  }
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetInt(), 3);
  EXPECT_EQ(d["usage"]["total_tokens"].GetInt(), 3);
  EXPECT_FALSE(d["usage"].HasMember("tollgate::cost"));
}

TEST(EncodeEmbeddingList, Base64WithCost) {
  const std::vector<std::vector<float>> vectors{{1.0f}, {0.1f, 0.2f}};
  const auto d =
      parse(encodeEmbeddingList(vectors, EmbeddingMeta{"m", true, kPricing, 2}, usage::of(5, 0)));
  ASSERT_EQ(d["data"].Size(), 2u);
  EXPECT_STREQ(d["data"][0]["embedding"].GetString(), "AACAPw==");
  expectSameBits(*base64ToFloats(d["data"][1]["embedding"].GetString()), vectors[1]);
  ASSERT_TRUE(d["usage"].HasMember("tollgate::cost"));
  EXPECT_DOUBLE_EQ(d["usage"]["tollgate::cost"].GetDouble(), 0.000005);
}

TEST(EncodeEmbeddingList, NoVectors) {
  const auto d = parse(encodeEmbeddingList({}, EmbeddingMeta{"m", false, {}, 0}, Usage{}));
  ASSERT_TRUE(d["data"].IsArray());
  EXPECT_EQ(d["data"].Size(), 0u);
  EXPECT_EQ(d["usage"]["prompt_tokens"].GetInt(), 0);
}

}  // namespace
}  // namespace tollgate::openai
