#include "cache/cache_key.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <ostream>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "openai/chat_request.hpp"
#include "openai/embedding_request.hpp"
#include "openai/rerank_request.hpp"

namespace tollgate::cache {
namespace {

constexpr std::string_view kTeam = "team_1";
constexpr std::string_view kChat = "/v1/chat/completions";
constexpr std::string_view kModel = "gpt_4o_mini";

KeyParts chatParts() { return KeyParts{kTeam, kChat, kModel, "", kChatIgnored}; }

/// The canonical text of `text`, parsed as the gateway parses (repeated keys allowed).
std::string canonical(const std::string& text) {
  rapidjson::Document doc;
  EXPECT_FALSE(json::parse(doc, text)) << text;
  return canonicalJson(doc);
}

/// The key of a chat request, computed over the decoded request's body as the gateway would.
std::string chatKey(std::string text, const KeyParts& parts = chatParts()) {
  auto req = openai::decodeChatRequest(text);
  EXPECT_TRUE(req.ok()) << text << ": " << (req.ok() ? "" : req.error().message);
  return req.ok() ? requestKey(parts, req->body) : std::string();
}

constexpr std::string_view kBase =
    R"({"model":"m","messages":[{"role":"user","content":"Hi"}],"temperature":1})";

/// `kBase` with `extra` members added before its closing brace.
std::string base(std::string_view extra) {
  std::string b(kBase.substr(0, kBase.size() - 1));
  return b + "," + std::string(extra) + "}";
}

// ---- canonicalJson ----

struct Canonical {
  std::string name;
  std::string input;
  std::string expected;
};

void PrintTo(const Canonical& c, std::ostream* os) { *os << c.name; }

class CacheCanonicalJson : public testing::TestWithParam<Canonical> {};

TEST_P(CacheCanonicalJson, Writes) {
  const Canonical& c = GetParam();
  EXPECT_EQ(canonical(c.input), c.expected);
  // Idempotent: the canonical text reads back as itself.
  EXPECT_EQ(canonical(c.expected), c.expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cache, CacheCanonicalJson,
    testing::Values(
        Canonical{"SortedNoWhitespace", R"({ "b" : 1, "a" : [ true, null, false ] })",
                  R"({"a":[true,null,false],"b":1})"},
        Canonical{"NestedSorted", R"({"z":{"y":1,"x":{"b":2,"a":1}},"a":[{"d":1,"c":2}]})",
                  R"({"a":[{"c":2,"d":1}],"z":{"x":{"a":1,"b":2},"y":1}})"},
        Canonical{"ByteOrder", R"({"é":1,"z":2,"Z":3,"a":4,"":5})",
                  R"({"":5,"Z":3,"a":4,"z":2,"é":1})"},
        Canonical{"FirstOfRepeatedNames", R"({"a":1,"b":2,"a":3,"a":{"x":1}})", R"({"a":1,"b":2})"},
        Canonical{"RepeatedNamesNested", R"([{"k":"first","k":"second"}])", R"([{"k":"first"}])"},
        Canonical{"IntegerValued", "[1,1.0,1e0,10E-1,-0,-0.0,0e5]", "[1,1,1,1,0,0,0]"},
        Canonical{"Int64Limits", "[-9223372036854775808,9223372036854775807]",
                  "[-9223372036854775808,9223372036854775807]"},
        Canonical{"Uint64", "[18446744073709551615,1e19,9223372036854775808.0]",
                  "[18446744073709551615,10000000000000000000,9223372036854775808]"},
        Canonical{"Fractions", "[0.5,0.10,1.5e-7,-2.25,0.30000000000000004]",
                  "[0.5,0.1,1.5e-07,-2.25,0.30000000000000004]"},
        // Integral, but past uint64: the shortest double text.
        Canonical{"Huge", "[1e300,-1E+300,1e21,100000000000000000000000]",
                  "[1e+300,-1e+300,1e+21,1e+23]"},
        Canonical{"EscapesOneWay", R"(["\u0041","\/","\u00e9","é","\u2028","\ud83d\ude00"])",
                  "[\"A\",\"/\",\"é\",\"é\",\"\u2028\",\"\U0001F600\"]"},
        Canonical{"ControlCharacters", R"(["\"\\\b\f\n\r\t\u0001\u001f\u007f"])",
                  "[\"\\\"\\\\\\b\\f\\n\\r\\t\\u0001\\u001F\x7f\"]"},
        Canonical{"Scalars", R"("x")", R"("x")"}, Canonical{"Empty", "{}", "{}"}),
    [](const auto& info) { return info.param.name; });

TEST(CacheCanonicalJsonDepth, DeepValueWithoutRecursion) {
  // Far deeper than a parse allows (json::kMaxDepth): built by hand.
  constexpr int kDepth = 200000;
  rapidjson::Document doc;
  auto& alloc = doc.GetAllocator();
  rapidjson::Value inner(rapidjson::kArrayType);
  for (int i = 0; i < kDepth; ++i) {
    rapidjson::Value outer(rapidjson::kObjectType);
    outer.AddMember("k", inner, alloc);  // Moves `inner`.
    inner.SetArray();
    inner.PushBack(outer, alloc);
  }
  const std::string text = canonicalJson(inner);
  EXPECT_EQ(text.size(), kDepth * std::string_view(R"([{"k":)").size() + 2 + kDepth * 2);
  EXPECT_TRUE(text.starts_with(R"([{"k":[{"k":)"));
}

TEST(CacheSha256, KnownVectors) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// ---- requestKey over decoded chat requests ----

struct KeyCase {
  std::string name;
  std::string body;
};

void PrintTo(const KeyCase& c, std::ostream* os) { *os << c.name; }

class CacheRequestKeySame : public testing::TestWithParam<KeyCase> {};
class CacheRequestKeyChanges : public testing::TestWithParam<KeyCase> {};

TEST_P(CacheRequestKeySame, AsTheBaseRequest) {
  EXPECT_EQ(chatKey(GetParam().body), chatKey(std::string(kBase)));
}

TEST_P(CacheRequestKeyChanges, FromTheBaseRequest) {
  EXPECT_NE(chatKey(GetParam().body), chatKey(std::string(kBase)));
}

INSTANTIATE_TEST_SUITE_P(
    Cache, CacheRequestKeySame,
    testing::Values(
        KeyCase{"KeyOrder", R"({"temperature":1,"messages":[{"content":"Hi","role":"user"}],
                               "model":"m"})"},
        KeyCase{"Whitespace",
                "{ \"model\" : \"m\" ,\n\t\"messages\" : [ { \"role\" : \"user\" , "
                "\"content\" : \"Hi\" } ] , \"temperature\" : 1 }\r\n"},
        KeyCase{"OnePointZero", R"({"model":"m","messages":[{"role":"user","content":"Hi"}],
                                   "temperature":1.0})"},
        KeyCase{"Exponent", R"({"model":"m","messages":[{"role":"user","content":"Hi"}],
                               "temperature":1e0})"},
        KeyCase{"EscapedLetters",
                R"({"model":"m","messages":[{"role":"user","content":"\u0048\u0069"}],
                   "temperature":1})"},
        KeyCase{"ModelString", R"({"model":"tollgate::model_name::other","temperature":1,
                                  "messages":[{"role":"user","content":"Hi"}]})"},
        KeyCase{"Tags", base(R"("tollgate::tags":{"feature":"search"})")},
        KeyCase{"EpisodeId",
                base(R"("tollgate::episode_id":"0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b")")},
        KeyCase{"Stream", base(R"("stream":true)")},
        KeyCase{"StreamOptions", base(R"("stream":true,"stream_options":{"include_usage":true})")},
        KeyCase{"Dryrun", base(R"("tollgate::dryrun":true)")},
        KeyCase{"CacheOptions", base(R"("tollgate::cache_options":{"max_age_s":60})")},
        KeyCase{"DenyUnknownFields", base(R"("tollgate::deny_unknown_fields":true)")},
        KeyCase{"VariantName", base(R"("tollgate::variant_name":"v1")")},
        KeyCase{
            "RawUsageAndResponse",
            base(R"("tollgate::include_raw_usage":true,"tollgate::include_raw_response":true)")},
        KeyCase{"ExplicitNull", base(R"("seed":null,"tools":null,"user":null)")}),
    [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Cache, CacheRequestKeyChanges,
    testing::Values(
        KeyCase{"Messages", R"({"model":"m","messages":[{"role":"user","content":"Ho"}],
                               "temperature":1})"},
        KeyCase{"Role", R"({"model":"m","messages":[{"role":"system","content":"Hi"}],
                           "temperature":1})"},
        KeyCase{"MoreMessages", R"({"model":"m","temperature":1,"messages":[
                  {"role":"user","content":"Hi"},{"role":"user","content":"Hi"}]})"},
        KeyCase{"Temperature", R"({"model":"m","messages":[{"role":"user","content":"Hi"}],
                                  "temperature":0.7})"},
        KeyCase{"NoTemperature", R"({"model":"m","messages":[{"role":"user","content":"Hi"}]})"},
        KeyCase{"Seed", base(R"("seed":7)")},
        KeyCase{"Tools", base(R"("tools":[{"type":"function","function":{"name":"f"}}])")},
        KeyCase{"ToolChoice", base(R"("tool_choice":"none")")},
        KeyCase{"ResponseFormat", base(R"("response_format":{"type":"json_object"})")},
        KeyCase{"MaxTokens", base(R"("max_tokens":5)")}, KeyCase{"Stop", base(R"("stop":["x"])")},
        KeyCase{"ServiceTier", base(R"("service_tier":"flex")")},
        KeyCase{"User", base(R"("user":"u-1")")},
        KeyCase{"UnknownField", base(R"("metadata":{"a":"b"})")}),
    [](const auto& info) { return info.param.name; });

TEST(CacheRequestKey, IsHexSha256) {
  const std::string key = chatKey(std::string(kBase));
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
}

TEST(CacheRequestKey, ChangesWithEachPart) {
  const std::string base_key = chatKey(std::string(kBase));
  const auto with = [](auto change) {
    KeyParts p = chatParts();
    change(p);
    return chatKey(std::string(kBase), p);
  };
  EXPECT_NE(with([](KeyParts& p) { p.team_id = "team_2"; }), base_key);
  EXPECT_NE(with([](KeyParts& p) { p.endpoint = "/v1/embeddings"; }), base_key);
  EXPECT_NE(with([](KeyParts& p) { p.model_id = "gpt_4o"; }), base_key);
  EXPECT_NE(with([](KeyParts& p) { p.variant = "v1"; }), base_key);
  EXPECT_NE(with([](KeyParts& p) { p.ignored = {}; }), base_key);
}

TEST(CacheRequestKey, PartsAreFramed) {
  rapidjson::Document body;
  ASSERT_FALSE(json::parse(body, "{}"));
  const KeyParts a{"ab", "c", "m", "", {}};
  const KeyParts b{"a", "bc", "m", "", {}};
  const KeyParts c{"a", "b", "cm", "", {}};
  EXPECT_NE(requestKey(a, body), requestKey(b, body));
  EXPECT_NE(requestKey(b, body), requestKey(c, body));
}

TEST(CacheRequestKey, RepeatedMemberCountsOnce) {
  // The request decoders refuse a repeated key, but a body parsed with them allowed (the
  // parser's default) is keyed by what a lookup finds: the first.
  std::string repeated = base(R"("temperature":0.2)");
  EXPECT_FALSE(openai::decodeChatRequest(repeated).ok());
  rapidjson::Document with_repeat;
  rapidjson::Document without;
  ASSERT_FALSE(json::parse(with_repeat, base(R"("temperature":0.2,"model":"x")")));
  ASSERT_FALSE(json::parse(without, std::string(kBase)));
  EXPECT_EQ(requestKey(chatParts(), with_repeat), requestKey(chatParts(), without));
  // A left-out name stays left out when it is repeated.
  rapidjson::Document ignored_first;
  ASSERT_FALSE(json::parse(ignored_first, base(R"("stream":true,"stream":{"x":1})")));
  EXPECT_EQ(requestKey(chatParts(), ignored_first), requestKey(chatParts(), without));
}

TEST(CacheRequestKey, EmbeddingsLeaveTheInputToItemKeys) {
  const auto key = [](std::string text) {
    auto req = openai::decodeEmbeddingRequest(text);
    EXPECT_TRUE(req.ok()) << text;
    return req.ok() ? requestKey(KeyParts{kTeam, "/v1/embeddings", "emb", "", kEmbeddingIgnored},
                                 req->body)
                    : std::string();
  };
  const std::string k = key(R"({"model":"e","input":["a","b"]})");
  EXPECT_EQ(key(R"({"model":"other","input":"c","tollgate::tags":{"t":"v"}})"), k);
  EXPECT_NE(key(R"({"model":"e","input":["a"],"dimensions":8})"), k);
  EXPECT_NE(key(R"({"model":"e","input":["a"],"encoding_format":"base64"})"), k);
  EXPECT_NE(key(R"({"model":"e","input":["a"],"user":"u"})"), k);
}

TEST(CacheRequestKey, RerankKeysTheQueryAndDocuments) {
  const auto key = [](std::string text) {
    auto req = openai::decodeRerankRequest(text);
    EXPECT_TRUE(req.ok()) << text;
    return req.ok() ? requestKey(KeyParts{kTeam, "/v1/rerank", "rr", "", kRerankIgnored}, req->body)
                    : std::string();
  };
  const std::string k = key(R"({"model":"r","query":"q","documents":["a","b"]})");
  EXPECT_EQ(key(R"({"documents":["a","b"],"query":"q","model":"x","tollgate::dryrun":false})"), k);
  EXPECT_NE(key(R"({"model":"r","query":"q2","documents":["a","b"]})"), k);
  EXPECT_NE(key(R"({"model":"r","query":"q","documents":["b","a"]})"), k);
  EXPECT_NE(key(R"({"model":"r","query":"q","documents":["a","b"],"top_n":1})"), k);
}

// ---- itemKey and requestDigest ----

TEST(CacheItemKey, CanonicalPerItemUnderItsRequest) {
  rapidjson::Document items;
  ASSERT_FALSE(json::parse(items, R"(["A","\u0041","B",[1,2],[1.0,2e0]])"));
  const std::string r1(64, 'a');
  const std::string r2(64, 'b');
  EXPECT_EQ(itemKey(r1, items[0]), itemKey(r1, items[1]));
  EXPECT_NE(itemKey(r1, items[0]), itemKey(r1, items[2]));
  EXPECT_NE(itemKey(r1, items[0]), itemKey(r2, items[0]));
  EXPECT_EQ(itemKey(r1, items[3]), itemKey(r1, items[4]));
  EXPECT_EQ(itemKey(r1, items[0]).size(), 64u);
}

TEST(CacheRequestDigest, WholeBodyAndExtras) {
  rapidjson::Document a;
  rapidjson::Document b;
  rapidjson::Document c;
  ASSERT_FALSE(json::parse(a, R"({"model":"m","x":1.0})"));
  ASSERT_FALSE(json::parse(b, R"({ "x": 1, "model": "m" })"));
  ASSERT_FALSE(json::parse(c, R"({"model":"n","x":1})"));
  EXPECT_EQ(requestDigest(a), requestDigest(b));
  EXPECT_NE(requestDigest(a), requestDigest(c));  // Nothing is left out, the model included.

  using Pair = std::pair<std::string_view, std::string_view>;
  const std::vector<Pair> one{{"language", "en"}};
  const std::vector<Pair> other{{"language", "de"}};
  const std::vector<Pair> split1{{"ab", "c"}};
  const std::vector<Pair> split2{{"a", "bc"}};
  EXPECT_NE(requestDigest(a, one), requestDigest(a));
  EXPECT_NE(requestDigest(a, one), requestDigest(a, other));
  EXPECT_NE(requestDigest(a, split1), requestDigest(a, split2));
  EXPECT_EQ(requestDigest(a, one), requestDigest(b, one));
}

}  // namespace
}  // namespace tollgate::cache
