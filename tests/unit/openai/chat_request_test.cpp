#include "openai/chat_request.hpp"

#include <gtest/gtest.h>

#include "rejected.hpp"

namespace tollgate::openai {
namespace {

constexpr std::string_view kMessages = R"("messages":[{"role":"user","content":"hi"}])";

std::string body(std::string_view extra) {
  std::string b = "{\"model\":\"m\"," + std::string(kMessages);
  if (!extra.empty()) {
    b += "," + std::string(extra);
  }
  return b + "}";
}

/// `"t0":"v","t1":"v",…` with `n` tags.
std::string manyTags(int n) {
  std::string out;
  for (int i = 0; i < n; ++i) {
    out += (i ? ",\"t" : "\"t") + std::to_string(i) + "\":\"v\"";
  }
  return out;
}

// decodeChatRequest parses in place. The tests below read only what the request copies out of
// the text (never ChatRequest::body), so the text may end with the call.
Result<ChatRequest> decode(std::string text) { return decodeChatRequest(text); }

class RejectedRequests : public testing::TestWithParam<Rejected> {};

TEST_P(RejectedRequests, NameTheParameter) {
  const Rejected& c = GetParam();
  const auto r = decode(c.body);
  ASSERT_FALSE(r.ok()) << c.body;
  expectRefusal(r.error(), c);
}

INSTANTIATE_TEST_SUITE_P(
    All, RejectedRequests,
    testing::Values(
        Rejected{"malformed_json", "{\"model\":", ErrorKind::InvalidJson, ""},
        Rejected{"not_an_object", "[1,2]", ErrorKind::InvalidType, ""},
        Rejected{"missing_model", "{" + std::string(kMessages) + "}", ErrorKind::MissingParameter,
                 "model"},
        Rejected{"missing_messages", R"({"model":"m"})", ErrorKind::MissingParameter, "messages"},
        Rejected{"model_not_string", R"({"model":5,"messages":[]})", ErrorKind::InvalidType,
                 "model"},
        Rejected{"empty_model", "{\"model\":\"\"," + std::string(kMessages) + "}",
                 ErrorKind::InvalidValue, "model"},
        Rejected{"messages_empty", R"({"model":"m","messages":[]})", ErrorKind::InvalidValue,
                 "messages"},
        Rejected{"messages_not_array", R"({"model":"m","messages":"hi"})", ErrorKind::InvalidType,
                 "messages"},
        Rejected{"message_not_object", R"({"model":"m","messages":[1]})", ErrorKind::InvalidType,
                 "messages[0]"},
        Rejected{"message_without_role", R"({"model":"m","messages":[{"content":"x"}]})",
                 ErrorKind::MissingParameter, "messages[0].role"},
        Rejected{"n_two", body(R"("n":2)"), ErrorKind::InvalidValue, "n"},
        Rejected{"n_zero", body(R"("n":0)"), ErrorKind::InvalidValue, "n"},
        Rejected{"n_string", body(R"("n":"1")"), ErrorKind::InvalidType, "n"},
        Rejected{"n_float", body(R"("n":1.5)"), ErrorKind::InvalidType, "n"},
        Rejected{"stop_bare_string", body(R"("stop":"END")"), ErrorKind::InvalidValue, "stop"},
        Rejected{"stop_numbers", body(R"("stop":[1])"), ErrorKind::InvalidValue, "stop"},
        Rejected{"max_tokens_negative", body(R"("max_tokens":-1)"), ErrorKind::InvalidValue,
                 "max_tokens"},
        Rejected{"max_completion_tokens_negative", body(R"("max_completion_tokens":-5)"),
                 ErrorKind::InvalidValue, "max_completion_tokens"},
        Rejected{"max_tokens_too_big", body(R"("max_tokens":2147483648)"), ErrorKind::InvalidValue,
                 "max_tokens"},
        Rejected{"max_tokens_float", body(R"("max_tokens":1.5)"), ErrorKind::InvalidType,
                 "max_tokens"},
        Rejected{"temperature_string", body(R"("temperature":"hot")"), ErrorKind::InvalidType,
                 "temperature"},
        Rejected{"top_p_bool", body(R"("top_p":true)"), ErrorKind::InvalidType, "top_p"},
        Rejected{"seed_too_big", body(R"("seed":4294967296)"), ErrorKind::InvalidValue, "seed"},
        Rejected{"service_tier_unknown", body(R"("service_tier":"turbo")"), ErrorKind::InvalidValue,
                 "service_tier"},
        Rejected{"stream_string", body(R"("stream":"yes")"), ErrorKind::InvalidType, "stream"},
        Rejected{"stream_options_array", body(R"("stream_options":[])"), ErrorKind::InvalidType,
                 "stream_options"},
        Rejected{"include_usage_string", body(R"("stream_options":{"include_usage":"y"})"),
                 ErrorKind::InvalidType, "stream_options.include_usage"},
        Rejected{"tools_object", body(R"("tools":{})"), ErrorKind::InvalidType, "tools"},
        Rejected{"tool_choice_number", body(R"("tool_choice":1)"), ErrorKind::InvalidType,
                 "tool_choice"},
        Rejected{"response_format_string", body(R"("response_format":"json")"),
                 ErrorKind::InvalidType, "response_format"},
        Rejected{"episode_not_uuid", body(R"("tollgate::episode_id":"abc")"),
                 ErrorKind::InvalidValue, "tollgate::episode_id"},
        Rejected{"dryrun_string", body(R"("tollgate::dryrun":"true")"), ErrorKind::InvalidType,
                 "tollgate::dryrun"},
        Rejected{"tags_number", body(R"("tollgate::tags":5)"), ErrorKind::InvalidTags,
                 "tollgate::tags"},
        Rejected{"tags_array", body(R"("tollgate::tags":["a","b"])"), ErrorKind::InvalidTags,
                 "tollgate::tags"},
        Rejected{"tags_too_many", body(R"("tollgate::tags":{)" + manyTags(33) + "}"),
                 ErrorKind::InvalidTags, "tollgate::tags"},
        Rejected{"tag_value_number", body(R"("tollgate::tags":{"n":1})"), ErrorKind::InvalidTags,
                 "tollgate::tags.n"},
        Rejected{"tag_empty_name", body(R"("tollgate::tags":{"":"x"})"), ErrorKind::InvalidTags,
                 "tollgate::tags."},
        Rejected{"tag_name_65", body(R"("tollgate::tags":{")" + std::string(65, 'k') + R"(":"v"})"),
                 ErrorKind::InvalidTags, "tollgate::tags." + std::string(65, 'k')},
        Rejected{"tag_value_257",
                 body(R"("tollgate::tags":{"k":")" + std::string(257, 'v') + R"("})"),
                 ErrorKind::InvalidTags, "tollgate::tags.k"},
        Rejected{"tag_value_control", body(R"("tollgate::tags":{"k":"a\nb"})"),
                 ErrorKind::InvalidTags, "tollgate::tags.k"},
        Rejected{"tag_name_c1", body(R"("tollgate::tags":{"a\u0085":"b"})"), ErrorKind::InvalidTags,
                 "tollgate::tags.a\\xc2\\x85"},
        Rejected{"tag_reserved", body(R"("tollgate::tags":{"tollgate::cost":"0"})"),
                 ErrorKind::InvalidTags, "tollgate::tags.tollgate::cost"},
        Rejected{"raw_usage_stream_without_usage",
                 body(R"("stream":true,"tollgate::include_raw_usage":true)"),
                 ErrorKind::InvalidValue, "tollgate::include_raw_usage"},
        Rejected{"deny_unknown", body(R"("zeta":1,"alpha":2,"tollgate::deny_unknown_fields":true)"),
                 ErrorKind::UnknownParameter, "alpha"}),
    [](const testing::TestParamInfo<Rejected>& info) { return info.param.name; });

TEST(ChatRequest, AcceptsEveryFieldOfTheSpec) {
  const auto r = decode(body(R"(
    "temperature":0.2,"top_p":1,"max_tokens":100,"max_completion_tokens":50,"n":1,
    "stop":["a","b"],"presence_penalty":0,"frequency_penalty":-0.5,"seed":7,
    "reasoning_effort":"low","verbosity":"high","service_tier":"flex","stream":true,
    "stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"f"}}],
    "tool_choice":"auto","parallel_tool_calls":false,"response_format":{"type":"json_object"},
    "tollgate::tags":{"source":"playground"},"tollgate::cache_options":{"enabled":"on"},
    "tollgate::dryrun":true,"tollgate::variant_name":"v1",
    "tollgate::episode_id":"0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b",
    "tollgate::deny_unknown_fields":true,"tollgate::include_raw_usage":true,
    "tollgate::include_raw_response":true)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->model, "m");
  EXPECT_TRUE(r->stream);
  EXPECT_TRUE(r->include_usage);
  EXPECT_EQ(r->max_completion_tokens, 50);
  EXPECT_EQ(r->service_tier, "flex");
  EXPECT_EQ(r->episode_id, "0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b");
  EXPECT_EQ(r->variant_name, "v1");
  EXPECT_TRUE(r->dryrun);
  EXPECT_TRUE(r->include_raw_usage);
  EXPECT_TRUE(r->include_raw_response);
}

TEST(ChatRequest, CacheOptionsAreReadAndTheirAgeNeverOverflows) {
  std::string body =
      R"({"model":"m","messages":[{"role":"user","content":"x"}],)"
      R"("tollgate::cache_options":{"enabled":"read_only","max_age_s":9223372036854775807}})";
  const auto r = decodeChatRequest(body);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->cache.reads());
  EXPECT_FALSE(r->cache.writes());
  EXPECT_EQ(r->cache.notBefore(1'700'000'000'000), 0) << "older than the epoch: any age";
  CacheOptions hour{CacheOptions::Mode::On, 3600};
  EXPECT_EQ(hour.notBefore(1'700'000'000'000), 1'700'000'000'000 - 3'600'000);
  EXPECT_EQ(CacheOptions{}.notBefore(1'700'000'000'000), 0);
}

TEST(ChatRequest, TagsAtTheirLimitsAreAccepted) {
  std::string e;
  for (int i = 0; i < 256; ++i) {
    e += "\u00e9";  // é: limits count characters, not bytes
  }
  for (const std::string& tags :
       std::vector<std::string>{"{" + manyTags(32) + "}", R"({"source":"playground"})", "{}",
                                R"({")" + std::string(64, 'k') + R"(":")" + e + R"("})"}) {
    std::string text = body(R"("tollgate::tags":)" + tags);
    EXPECT_TRUE(decodeChatRequest(text)) << tags;
  }
}

TEST(ChatRequest, SmallerTokenLimitWinsEitherWay) {
  EXPECT_EQ(decode(body(R"("max_tokens":10,"max_completion_tokens":20)"))->max_completion_tokens,
            10);
  EXPECT_EQ(decode(body(R"("max_tokens":30,"max_completion_tokens":20)"))->max_completion_tokens,
            20);
  EXPECT_EQ(decode(body(R"("max_tokens":0)"))->max_completion_tokens, 0);
  EXPECT_FALSE(decode(body(""))->max_completion_tokens.has_value());
}

TEST(ChatRequest, CountsTheContentPartsThatAreNotText) {
  const auto r =
      decode(R"({"model":"m","messages":[{"role":"system","content":"be brief"},)"
             R"({"role":"user","content":[{"type":"text","text":"what is this?"},)"
             R"({"type":"image_url","image_url":{"url":"https://x.io/a.png"}},)"
             R"({"type":"input_audio","input_audio":{"data":"AAAA","format":"wav"}}]}]})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->media_parts, 2);
  EXPECT_EQ(decode(body(""))->media_parts, 0);
}

TEST(ChatRequest, DefaultsAndNulls) {
  const auto r = decode(body(R"("n":null,"stop":null,"temperature":null)"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->stream);
  EXPECT_EQ(r->service_tier, "auto");
  EXPECT_TRUE(r->episode_id.empty());
}

TEST(ChatRequest, UnknownFieldsAcceptedUnlessDenied) {
  EXPECT_TRUE(decode(body(R"("foo":1)")).ok());
  EXPECT_TRUE(decode(body(R"("foo":1,"tollgate::deny_unknown_fields":false)")).ok());
  const auto r = decode(body(R"("zeta":1,"alpha":2,"tollgate::deny_unknown_fields":true)"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("alpha, zeta"), std::string::npos) << r.error().message;
}

TEST(ChatRequest, RawUsageWhileStreamingWithUsageIsFine) {
  EXPECT_TRUE(
      decode(
          body(
              R"("stream":true,"stream_options":{"include_usage":true},"tollgate::include_raw_usage":true)"))
          .ok());
  EXPECT_TRUE(decode(body(R"("tollgate::include_raw_usage":true)")).ok());
}

TEST(ChatRequest, ForwardedFields) {
  EXPECT_TRUE(isForwardedField("messages"));
  EXPECT_TRUE(isForwardedField("tools"));
  EXPECT_TRUE(isForwardedField("logit_bias"));
  EXPECT_FALSE(isForwardedField("n"));
  EXPECT_FALSE(isForwardedField("model"));
  EXPECT_FALSE(isForwardedField("service_tier"));
  EXPECT_FALSE(isForwardedField("max_tokens"));
  EXPECT_FALSE(isForwardedField("tollgate::tags"));
  EXPECT_FALSE(isForwardedField("unknown"));
}

TEST(ChatRequest, EveryFieldIsFoundByItsExactNameOnly) {
  // The whole allow-list, as the forwarded body must hold it; near misses are unknown.
  for (const char* name :
       {"messages", "temperature", "top_p", "stop", "presence_penalty", "frequency_penalty", "seed",
        "reasoning_effort", "verbosity", "stream", "tools", "tool_choice", "parallel_tool_calls",
        "response_format", "logit_bias", "logprobs", "top_logprobs", "user"}) {
    EXPECT_TRUE(isForwardedField(name)) << name;
    EXPECT_FALSE(isForwardedField(std::string(name) + "s")) << name;
    EXPECT_FALSE(isForwardedField(std::string(name).substr(1))) << name;
  }
  for (const char* name :
       {"", "m", "Messages", "tollgate::", "tollgate::dryrunx", "stream_option"}) {
    EXPECT_FALSE(isForwardedField(name)) << name;
  }
  // Every other known field decodes; an unknown one is refused when the client asks.
  EXPECT_TRUE(decode(body(R"("tollgate::dryrun":true,"tollgate::episode_id":null,"n":1)")).ok());
  EXPECT_FALSE(
      decode(body(R"("tollgate::deny_unknown_fields":true,"tollgate::dryrunx":true)")).ok());
}

}  // namespace
}  // namespace tollgate::openai

namespace tollgate::openai {
namespace {

TEST(ChatRequest, EmbeddedNulIsInvalidJson) {
  const std::string text = body("");
  const std::string with_nul = text + std::string("\0{}", 3);
  const auto r = decode(with_nul);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidJson);
  EXPECT_TRUE(decode(text).ok());
}

}  // namespace
}  // namespace tollgate::openai
