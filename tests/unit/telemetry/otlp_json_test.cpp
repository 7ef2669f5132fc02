#include "telemetry/otlp_json.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/text.hpp"

namespace tollgate::telemetry {
namespace {

using std::chrono::microseconds;

constexpr std::string_view kParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::int64_t kEndNs = 1'700'000'000'000'000'000;

/// The string value of attribute `key` of `span`; "<absent>" when it has none.
std::string attribute(const rapidjson::Value& span, std::string_view key) {
  for (const auto& a : span["attributes"].GetArray()) {
    if (a["key"].GetString() == key) {
      const auto& v = a["value"];
      return v.HasMember("stringValue") ? v["stringValue"].GetString() : v["intValue"].GetString();
    }
  }
  return "<absent>";
}

class OtlpJsonTest : public ::testing::Test {
 protected:
  OtlpJsonTest() {
    model_.id = "gpt_small";
    model_.endpoint = config::Endpoint::Chat;
    upstream_.tls = true;
    upstream_.host = "api.example.com";
    upstream_.port = "443";
    ctx_.trace = trace::begin(kParent, "", 1.0);
    ctx_.method = "POST";
    ctx_.path = "/v1/chat/completions";
    ctx_.model = "gpt_small";
    ctx_.served = &model_;
    ctx_.provider = "primary";
    ctx_.status = 200;
    ctx_.usage = usage::of(12, 34);
    // A first attempt that failed, and its retry that answered.
    ctx_.attempt_log.push_back({"primary", &upstream_, trace::newSpanId(), microseconds(100),
                                microseconds(0), false, microseconds(0), microseconds(900), 0,
                                "upstream_unavailable"});
    ctx_.attempt_log.push_back({"primary", &upstream_, trace::newSpanId(), microseconds(1000),
                                microseconds(1100), false, microseconds(1500), microseconds(4000),
                                200, ""});
  }

  /// The spans of the exchange, encoded and parsed back.
  rapidjson::Document encoded() {
    const auto steady_end = ctx_.started + microseconds(5000);
    const auto spans = spansOf(ctx_, kEndNs, steady_end);
    EXPECT_TRUE(spans.has_value());
    const std::vector<ExchangeSpans> batch{*spans};
    rapidjson::Document d;
    d.Parse(encode(batch, "9.9.9").c_str());
    EXPECT_FALSE(d.HasParseError());
    return d;
  }

  config::Config config_;
  config::Model model_;
  config::UpstreamUrl upstream_;
  exchange::RequestContext ctx_{config_, "req-1"};
};

TEST_F(OtlpJsonTest, AnExchangeIsAServerSpanAndEachAttemptAClientChild) {
  const rapidjson::Document d = encoded();
  const auto& resource = d["resourceSpans"][0];
  EXPECT_EQ(attribute(resource["resource"], "service.name"), "tollgate");
  EXPECT_EQ(attribute(resource["resource"], "service.version"), "9.9.9");
  const auto& spans = resource["scopeSpans"][0]["spans"];
  ASSERT_EQ(spans.Size(), 3U);
  const auto& server = spans[0];
  EXPECT_EQ(std::string(server["traceId"].GetString()), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(std::string(server["parentSpanId"].GetString()), "00f067aa0ba902b7");
  EXPECT_EQ(std::string(server["spanId"].GetString()), text::hex(ctx_.trace.span_id));
  EXPECT_EQ(server["kind"].GetInt(), 2);
  EXPECT_EQ(std::string(server["name"].GetString()), "chat gpt_small");
  EXPECT_EQ(std::string(server["endTimeUnixNano"].GetString()), std::to_string(kEndNs));
  EXPECT_EQ(std::string(server["startTimeUnixNano"].GetString()),
            std::to_string(kEndNs - 5'000'000));
  EXPECT_FALSE(server.HasMember("status"));
  EXPECT_EQ(attribute(server, "gen_ai.operation.name"), "chat");
  EXPECT_EQ(attribute(server, "gen_ai.request.model"), "gpt_small");
  EXPECT_EQ(attribute(server, "gen_ai.provider.name"), "primary");
  EXPECT_EQ(attribute(server, "gen_ai.usage.input_tokens"), "12");
  EXPECT_EQ(attribute(server, "gen_ai.usage.output_tokens"), "34");
  EXPECT_EQ(attribute(server, "http.response.status_code"), "200");
  EXPECT_EQ(attribute(server, "tollgate.request_id"), "req-1");
  EXPECT_EQ(attribute(server, "error.type"), "<absent>");

  for (int i = 1; i <= 2; ++i) {
    const auto& client = spans[i];
    EXPECT_EQ(std::string(client["traceId"].GetString()), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(std::string(client["parentSpanId"].GetString()), text::hex(ctx_.trace.span_id));
    EXPECT_EQ(std::string(client["spanId"].GetString()), text::hex(ctx_.attempt_log[i - 1].span));
    EXPECT_EQ(client["kind"].GetInt(), 3);
    EXPECT_EQ(attribute(client, "server.address"), "api.example.com");
    EXPECT_EQ(attribute(client, "server.port"), "443");
    EXPECT_EQ(attribute(client, "gen_ai.request.model"), "gpt_small");
  }
  const auto& failed = spans[1];
  EXPECT_EQ(std::string(failed["startTimeUnixNano"].GetString()),
            std::to_string(kEndNs - 5'000'000 + 100'000));
  EXPECT_EQ(std::string(failed["endTimeUnixNano"].GetString()),
            std::to_string(kEndNs - 5'000'000 + 900'000));
  EXPECT_EQ(attribute(failed, "error.type"), "upstream_unavailable");
  EXPECT_EQ(attribute(failed, "http.response.status_code"), "<absent>");
  EXPECT_EQ(attribute(failed, "gen_ai.usage.input_tokens"), "<absent>");
  EXPECT_EQ(failed["status"]["code"].GetInt(), 2);
  const auto& answered = spans[2];
  EXPECT_EQ(attribute(answered, "http.response.status_code"), "200");
  EXPECT_EQ(attribute(answered, "gen_ai.usage.output_tokens"), "34");
  EXPECT_FALSE(answered.HasMember("status"));
}

TEST_F(OtlpJsonTest, AFailedExchangeCarriesItsErrorType) {
  ctx_.status = 502;
  ctx_.error_code = "upstream_error";
  const rapidjson::Document d = encoded();
  const auto& server = d["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_EQ(attribute(server, "error.type"), "upstream_error");
  EXPECT_EQ(server["status"]["code"].GetInt(), 2);
}

TEST_F(OtlpJsonTest, ANewTraceHasNoParentAndOnlyInferencesHaveSpans) {
  ctx_.trace = trace::begin("", "", 1.0);
  const rapidjson::Document d = encoded();
  EXPECT_FALSE(d["resourceSpans"][0]["scopeSpans"][0]["spans"][0].HasMember("parentSpanId"));
  ctx_.served = nullptr;
  EXPECT_EQ(operationOf(ctx_), "chat");  // By its path: refused before a model served.
  ctx_.path = "/v1/embeddings";
  EXPECT_EQ(operationOf(ctx_), "embeddings");
  ctx_.path = "/v1/models";
  EXPECT_EQ(operationOf(ctx_), "");
  EXPECT_FALSE(spansOf(ctx_, kEndNs, ctx_.started).has_value());
}

TEST_F(OtlpJsonTest, ABatchOfExchangesStaysOneDocumentAndTextIsEscaped) {
  // Written by hand, not by a JSON library: the separators between exchanges and spans, and a
  // name an upstream chose with a quote, a backslash and control characters in it.
  ctx_.response_model = "odd \"model\\\" \n\t\x01 é";
  const auto spans = spansOf(ctx_, kEndNs, ctx_.started + microseconds(5000));
  ASSERT_TRUE(spans.has_value());
  const std::vector<ExchangeSpans> batch{*spans, *spans};
  const std::string text = encode(batch, "1.0 \"beta\"");
  rapidjson::Document d;
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError()) << text;
  const auto& resource = d["resourceSpans"][0];
  EXPECT_EQ(attribute(resource["resource"], "service.version"), "1.0 \"beta\"");
  const auto& all = resource["scopeSpans"][0]["spans"];
  ASSERT_EQ(all.Size(), 6U);
  EXPECT_EQ(attribute(all[3], "gen_ai.response.model"), ctx_.response_model);
  EXPECT_EQ(attribute(all[5], "gen_ai.response.model"), ctx_.response_model);
  EXPECT_EQ(attribute(all[4], "gen_ai.response.model"), "<absent>");  // The failed attempt.
}

}  // namespace
}  // namespace tollgate::telemetry
