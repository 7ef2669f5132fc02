#include "openai/embedding_request.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "rejected.hpp"

namespace tollgate::openai {
namespace {

/// `{"model":"m","input":"hi",EXTRA}`.
std::string body(std::string_view extra) {
  std::string b = R"({"model":"m","input":"hi")";
  if (!extra.empty()) {
    b += "," + std::string(extra);
  }
  return b + "}";
}

/// `{"model":"m","input":INPUT}`.
std::string withInput(std::string_view input) {
  return R"({"model":"m","input":)" + std::string(input) + "}";
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
  Result<EmbeddingRequest> result;
};

Decoded decode(std::string text) {
  auto owned = std::make_unique<std::string>(std::move(text));
  auto result = decodeEmbeddingRequest(*owned);
  return Decoded{std::move(owned), std::move(result)};
}

class RejectedEmbeddingRequests : public testing::TestWithParam<Rejected> {};

TEST_P(RejectedEmbeddingRequests, NameTheParameter) {
  const Rejected& c = GetParam();
  const Decoded d = decode(c.body);
  ASSERT_FALSE(d.result.ok()) << c.body;
  expectRefusal(d.result.error(), c);
}

INSTANTIATE_TEST_SUITE_P(
    All, RejectedEmbeddingRequests,
    testing::Values(
        Rejected{"malformed_json", R"({"model":"m",)", ErrorKind::InvalidJson, ""},
        Rejected{"duplicate_key", R"({"model":"m","model":"n","input":"hi"})",
                 ErrorKind::InvalidJson, "model"},
        Rejected{"not_an_object", R"(["m","hi"])", ErrorKind::InvalidType, ""},
        Rejected{"missing_model", R"({"input":"hi"})", ErrorKind::MissingParameter, "model"},
        Rejected{"null_model", R"({"model":null,"input":"hi"})", ErrorKind::MissingParameter,
                 "model"},
        Rejected{"empty_model", R"({"model":"","input":"hi"})", ErrorKind::InvalidValue, "model"},
        Rejected{"model_number", R"({"model":5,"input":"hi"})", ErrorKind::InvalidType, "model"},
        Rejected{"model_array", R"({"model":["m"],"input":"hi"})", ErrorKind::InvalidType, "model"},
        Rejected{"missing_input", R"({"model":"m"})", ErrorKind::MissingParameter, "input"},
        Rejected{"null_input", R"({"model":"m","input":null})", ErrorKind::MissingParameter,
                 "input"},
        Rejected{"empty_string", withInput(R"("")"), ErrorKind::InvalidValue, "input"},
        Rejected{"empty_array", withInput("[]"), ErrorKind::InvalidValue, "input"},
        Rejected{"input_number", withInput("5"), ErrorKind::InvalidType, "input"},
        Rejected{"input_object", withInput(R"({"text":"hi"})"), ErrorKind::InvalidType, "input"},
        Rejected{"empty_string_item", withInput(R"(["a",""])"), ErrorKind::InvalidValue,
                 "input[1]"},
        Rejected{"strings_then_number", withInput(R"(["a",1])"), ErrorKind::InvalidType, "input"},
        Rejected{"number_then_string", withInput(R"([1,"a"])"), ErrorKind::InvalidType, "input"},
        Rejected{"strings_then_tokens", withInput(R"(["a",[1]])"), ErrorKind::InvalidType, "input"},
        Rejected{"tokens_then_string", withInput(R"([[1],"a"])"), ErrorKind::InvalidType, "input"},
        Rejected{"booleans", withInput("[true]"), ErrorKind::InvalidType, "input"},
        Rejected{"negative_token", withInput("[1,-1]"), ErrorKind::InvalidType, "input"},
        Rejected{"fractional_token", withInput("[1.5]"), ErrorKind::InvalidType, "input"},
        Rejected{"token_above_int32", withInput("[2147483648]"), ErrorKind::InvalidType, "input"},
        Rejected{"empty_token_array", withInput("[[1],[]]"), ErrorKind::InvalidValue, "input[1]"},
        Rejected{"negative_nested_token", withInput("[[1],[2,-3]]"), ErrorKind::InvalidType,
                 "input[1]"},
        Rejected{"fractional_nested_token", withInput("[[0.5]]"), ErrorKind::InvalidType,
                 "input[0]"},
        Rejected{"strings_2049", withInput(arrayOf(2049, R"("a")")), ErrorKind::InvalidValue,
                 "input"},
        Rejected{"token_arrays_2049", withInput(arrayOf(2049, "[1]")), ErrorKind::InvalidValue,
                 "input"},
        Rejected{"dimensions_zero", body(R"("dimensions":0)"), ErrorKind::InvalidValue,
                 "dimensions"},
        Rejected{"dimensions_negative", body(R"("dimensions":-1)"), ErrorKind::InvalidValue,
                 "dimensions"},
        Rejected{"dimensions_fraction", body(R"("dimensions":1.5)"), ErrorKind::InvalidType,
                 "dimensions"},
        Rejected{"dimensions_string", body(R"("dimensions":"3")"), ErrorKind::InvalidType,
                 "dimensions"},
        Rejected{"dimensions_2_31", body(R"("dimensions":2147483648)"), ErrorKind::InvalidValue,
                 "dimensions"},
        Rejected{"encoding_format_hex", body(R"("encoding_format":"hex")"), ErrorKind::InvalidValue,
                 "encoding_format"},
        Rejected{"encoding_format_upper", body(R"("encoding_format":"FLOAT")"),
                 ErrorKind::InvalidValue, "encoding_format"},
        Rejected{"encoding_format_number", body(R"("encoding_format":1)"), ErrorKind::InvalidType,
                 "encoding_format"},
        Rejected{"user_number", body(R"("user":1)"), ErrorKind::InvalidType, "user"},
        Rejected{"cache_options_string", body(R"("tollgate::cache_options":"on")"),
                 ErrorKind::InvalidType, "tollgate::cache_options"},
        Rejected{"dryrun_string", body(R"("tollgate::dryrun":"true")"), ErrorKind::InvalidType,
                 "tollgate::dryrun"},
        Rejected{"deny_unknown_string", body(R"("tollgate::deny_unknown_fields":"yes")"),
                 ErrorKind::InvalidType, "tollgate::deny_unknown_fields"},
        Rejected{"tags_array", body(R"("tollgate::tags":["a"])"), ErrorKind::InvalidTags,
                 "tollgate::tags"},
        Rejected{"tag_value_number", body(R"("tollgate::tags":{"k":1})"), ErrorKind::InvalidTags,
                 "tollgate::tags.k"},
        Rejected{"tag_reserved", body(R"("tollgate::tags":{"tollgate::x":"v"})"),
                 ErrorKind::InvalidTags, "tollgate::tags.tollgate::x"},
        Rejected{"deny_unknown", body(R"("zeta":1,"alpha":2,"tollgate::deny_unknown_fields":true)"),
                 ErrorKind::UnknownParameter, "alpha"},
        Rejected{"deny_unknown_before_the_unknown",
                 R"({"tollgate::deny_unknown_fields":true,"model":"m","input":"hi","extra":1})",
                 ErrorKind::UnknownParameter, "extra"}),
    [](const testing::TestParamInfo<Rejected>& info) { return info.param.name; });

struct Accepted {
  std::string name;
  std::string input;
  std::size_t inputs;
};

void PrintTo(const Accepted& c, std::ostream* os) { *os << c.name; }

class AcceptedInputs : public testing::TestWithParam<Accepted> {};

TEST_P(AcceptedInputs, CountTheTexts) {
  const Accepted& c = GetParam();
  const Decoded d = decode(withInput(c.input));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->inputs, c.inputs);
}

INSTANTIATE_TEST_SUITE_P(
    All, AcceptedInputs,
    testing::Values(Accepted{"string", R"("hello")", 1}, Accepted{"one_string", R"(["hello"])", 1},
                    Accepted{"strings", R"(["a","b","c"])", 3},
                    Accepted{"token_array", "[1,2,3,4]", 1},
                    Accepted{"token_zero_and_max", "[0,2147483647]", 1},
                    Accepted{"token_arrays", "[[1,2],[3],[4,5,6]]", 3},
                    Accepted{"strings_2048", arrayOf(2048, R"("a")"), 2048},
                    Accepted{"token_arrays_2048", arrayOf(2048, "[7]"), 2048},
                    // One text of many tokens: the 2048 limit counts texts, not tokens.
                    Accepted{"long_token_array", arrayOf(3000, "7"), 1}),
    [](const testing::TestParamInfo<Accepted>& info) { return info.param.name; });

TEST(EmbeddingRequest, PrefixedModelIsCurrent) {
  const Decoded d = decode(R"({"model":"tollgate::embedding_model_name::x","input":"hi"})");
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->model, "tollgate::embedding_model_name::x");
  EXPECT_EQ(d.result->model_id, "x");
  EXPECT_FALSE(d.result->unprefixed);
}

TEST(EmbeddingRequest, BareModelIsAcceptedButUnprefixed) {
  const Decoded d = decode(R"({"model":"text_embedding_3_small","input":"hi"})");
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->model, "text_embedding_3_small");
  EXPECT_EQ(d.result->model_id, "text_embedding_3_small");
  EXPECT_TRUE(d.result->unprefixed);
}

TEST(EmbeddingRequest, APrefixElsewhereInTheNameIsNotThePrefix) {
  const Decoded d = decode(R"({"model":"x::tollgate::embedding_model_name::y","input":"hi"})");
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->model_id, "x::tollgate::embedding_model_name::y");
  EXPECT_TRUE(d.result->unprefixed);
}

TEST(EmbeddingRequest, Defaults) {
  const Decoded d = decode(body(""));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_FALSE(d.result->base64);
  EXPECT_FALSE(d.result->dimensions.has_value());
  EXPECT_FALSE(d.result->dryrun);
  EXPECT_TRUE(d.result->tags.empty());
  EXPECT_FALSE(d.result->pricing.has_value());
  EXPECT_EQ(d.result->inputs, 1u);
  EXPECT_TRUE(d.result->body.IsObject());
}

TEST(EmbeddingRequest, DimensionsFromOneToInt32Max) {
  for (const int dims : {1, 256, 2147483647}) {
    const Decoded d = decode(body(R"("dimensions":)" + std::to_string(dims)));
    ASSERT_TRUE(d.result.ok()) << dims << ": " << d.result.error().message;
    EXPECT_EQ(d.result->dimensions, dims);
  }
}

TEST(EmbeddingRequest, EncodingFormat) {
  const Decoded as_float = decode(body(R"("encoding_format":"float")"));
  ASSERT_TRUE(as_float.result.ok()) << as_float.result.error().message;
  EXPECT_FALSE(as_float.result->base64);
  const Decoded as_base64 = decode(body(R"("encoding_format":"base64")"));
  ASSERT_TRUE(as_base64.result.ok()) << as_base64.result.error().message;
  EXPECT_TRUE(as_base64.result->base64);
}

TEST(EmbeddingRequest, TagsAreKeptInOrder) {
  const Decoded d = decode(body(R"("tollgate::tags":{"feature":"search","team":"ml"})"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  const Tags expected{{"feature", "search"}, {"team", "ml"}};
  EXPECT_EQ(d.result->tags, expected);
}

TEST(EmbeddingRequest, Dryrun) {
  const Decoded on = decode(body(R"("tollgate::dryrun":true)"));
  ASSERT_TRUE(on.result.ok()) << on.result.error().message;
  EXPECT_TRUE(on.result->dryrun);
  const Decoded off = decode(body(R"("tollgate::dryrun":false)"));
  ASSERT_TRUE(off.result.ok()) << off.result.error().message;
  EXPECT_FALSE(off.result->dryrun);
}

TEST(EmbeddingRequest, UnknownFieldsAcceptedUnlessDenied) {
  EXPECT_TRUE(decode(body(R"("foo":1)")).result.ok());
  EXPECT_TRUE(decode(body(R"("foo":1,"tollgate::deny_unknown_fields":false)")).result.ok());
  EXPECT_TRUE(decode(body(R"("tollgate::deny_unknown_fields":true)")).result.ok());
  const Decoded d = decode(body(R"("zeta":1,"alpha":2,"tollgate::deny_unknown_fields":true)"));
  ASSERT_FALSE(d.result.ok());
  EXPECT_NE(d.result.error().message.find("alpha, zeta"), std::string::npos)
      << d.result.error().message;
}

TEST(EmbeddingRequest, NullFieldsAreNotGiven) {
  const Decoded d =
      decode(body(R"("dimensions":null,"encoding_format":null,"user":null,"tollgate::tags":null,)"
                  R"("tollgate::dryrun":null,"tollgate::cache_options":null,)"
                  R"("tollgate::deny_unknown_fields":null)"));
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_FALSE(d.result->dimensions.has_value());
  EXPECT_FALSE(d.result->base64);
  EXPECT_FALSE(d.result->dryrun);
  EXPECT_TRUE(d.result->tags.empty());
}

TEST(EmbeddingRequest, AcceptsEveryField) {
  const Decoded d =
      decode(R"({"model":"tollgate::embedding_model_name::e","input":["a","b"],"dimensions":64,)"
             R"("encoding_format":"base64","user":"u-1","tollgate::tags":{"k":"v"},)"
             R"("tollgate::cache_options":{"enabled":"on"},"tollgate::dryrun":true,)"
             R"("tollgate::deny_unknown_fields":true})");
  ASSERT_TRUE(d.result.ok()) << d.result.error().message;
  EXPECT_EQ(d.result->model_id, "e");
  EXPECT_EQ(d.result->inputs, 2u);
  EXPECT_EQ(d.result->dimensions, 64);
  EXPECT_TRUE(d.result->base64);
  EXPECT_TRUE(d.result->dryrun);
  EXPECT_EQ(d.result->tags.size(), 1u);
}

TEST(EmbeddingRequest, ForwardedFields) {
  for (const char* name : {"input", "dimensions", "encoding_format", "user"}) {
    EXPECT_TRUE(isForwardedEmbeddingField(name)) << name;
  }
  for (const char* name : {"model", "tollgate::tags", "tollgate::dryrun", "tollgate::cache_options",
                           "tollgate::deny_unknown_fields", "unknown", ""}) {
    EXPECT_FALSE(isForwardedEmbeddingField(name)) << name;
  }
}

}  // namespace
}  // namespace tollgate::openai
