#include "config/telemetry_config.hpp"

#include <gtest/gtest.h>

#include "config/live_config.hpp"

namespace tollgate::config {
namespace {

const std::string kEcho =
    "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n";

std::optional<std::string> env(const std::string& name) {
  if (name == "COLLECTOR_AUTH") {
    return "Bearer abc123";
  }
  if (name == "BAD_VALUE") {
    return "line\r\nInjected: yes";
  }
  return std::nullopt;
}

Config parse(const std::string& tables) {
  return parseConfig(tables + "\n" + kEcho, "c.toml", env);
}

Traces traces(const std::string& table) { return parse("[traces]\n" + table).traces; }

/// The refusal of `tables`: its key and reason.
std::pair<std::string, std::string> refusal(const std::string& tables) {
  try {
    parse(tables);
  } catch (const ConfigError& e) {
    return {e.key(), e.reason()};
  }
  ADD_FAILURE() << "accepted: " << tables;
  return {};
}

TEST(TelemetryConfigTest, DefaultsExportNothingAndSampleEverything) {
  const Config c = parse("");
  EXPECT_FALSE(c.traces.endpoint.has_value());
  EXPECT_TRUE(c.traces.headers.empty());
  EXPECT_EQ(c.traces.sample_ratio, 1.0);
  EXPECT_EQ(c.traces.max_queue_spans, 2048);
  EXPECT_EQ(c.log.format, LogFormat::Text);
  EXPECT_TRUE(c.metrics.enabled);
}

TEST(TelemetryConfigTest, MetricsCanBeTurnedOffAtStartOnly) {
  const Config running = parse("");
  Config next = parse("[metrics]\nenabled = false");
  EXPECT_FALSE(next.metrics.enabled);
  EXPECT_EQ(keepRestartOnly(next, running), (std::vector<std::string>{"metrics.enabled"}));
  EXPECT_TRUE(next.metrics.enabled);
  EXPECT_EQ(refusal("[metrics]\nenabled = \"no\"").first, "metrics.enabled");
}

TEST(TelemetryConfigTest, EndpointIsHttpsOrLoopbackHttp) {
  const Traces t = traces("endpoint = \"https://otel.example.com:4318\"");
  ASSERT_TRUE(t.endpoint.has_value());
  EXPECT_TRUE(t.endpoint->tls);
  EXPECT_EQ(t.endpoint->host, "otel.example.com");
  EXPECT_EQ(t.endpoint->port, "4318");
  EXPECT_EQ(t.endpoint->path, "/v1/traces");  // OTLP's path when none is given.
  EXPECT_EQ(traces("endpoint = \"https://otel.example.com/custom/traces\"").endpoint->path,
            "/custom/traces");
  EXPECT_EQ(traces("endpoint = \"http://127.0.0.1:4318\"").endpoint->host, "127.0.0.1");
  EXPECT_EQ(traces("endpoint = \"http://127.8.9.10:4318\"").endpoint->host, "127.8.9.10");
  EXPECT_EQ(traces("endpoint = \"http://[::1]:4318\"").endpoint->host, "::1");
  EXPECT_EQ(traces("endpoint = \"http://localhost:4318\"").endpoint->host, "localhost");
  for (const std::string url : {"http://otel.example.com:4318", "http://10.0.0.1:4318",
                                "http://128.0.0.1", "http://[::2]:4318"}) {
    const auto [key, reason] = refusal("[traces]\nendpoint = \"" + url + "\"");
    EXPECT_EQ(key, "traces.endpoint") << url;
    EXPECT_NE(reason.find("must be https"), std::string::npos) << reason;
  }
  EXPECT_EQ(refusal("[traces]\nendpoint = \"ftp://otel.example.com\"").first, "traces.endpoint");
  EXPECT_EQ(refusal("[traces]\nendpoint = \"https://user:pw@otel.example.com\"").first,
            "traces.endpoint");
  EXPECT_EQ(refusal("[traces]\nendpoint = \"https://otel.example.com/?q=1\"").first,
            "traces.endpoint");
}

TEST(TelemetryConfigTest, HeadersComeFromTheEnvironmentOnly) {
  const Traces t = traces(
      "endpoint = \"https://otel.example.com\"\n[traces.headers]\nAuthorization = "
      "\"env::COLLECTOR_AUTH\"");
  ASSERT_EQ(t.headers.size(), 1U);
  EXPECT_EQ(t.headers[0].first, "Authorization");
  EXPECT_EQ(t.headers[0].second, "Bearer abc123");
  const std::string base = "[traces]\nendpoint = \"https://otel.example.com\"\n[traces.headers]\n";
  const auto [key, reason] = refusal(base + "Authorization = \"Bearer abc123\"");
  EXPECT_EQ(key, "traces.headers.Authorization");
  EXPECT_NE(reason.find("env::"), std::string::npos) << reason;
  EXPECT_EQ(refusal(base + "Authorization = \"env::UNSET\"").first, "traces.headers.Authorization");
  EXPECT_EQ(refusal(base + "Authorization = \"env::BAD_VALUE\"").first,
            "traces.headers.Authorization");
  EXPECT_EQ(refusal(base + "\"Bad Name\" = \"env::COLLECTOR_AUTH\"").first,
            "traces.headers.Bad Name");
  EXPECT_EQ(refusal(base + "Content-Length = \"env::COLLECTOR_AUTH\"").first,
            "traces.headers.Content-Length");
  EXPECT_EQ(refusal(base + "X-Key = 3").first, "traces.headers.X-Key");
  EXPECT_EQ(refusal("[traces.headers]\nX-Key = \"env::COLLECTOR_AUTH\"").first, "traces.headers");
}

TEST(TelemetryConfigTest, RatioAndQueueAreBounded) {
  EXPECT_EQ(traces("sample_ratio = 0").sample_ratio, 0.0);
  EXPECT_EQ(traces("sample_ratio = 0.25").sample_ratio, 0.25);
  EXPECT_EQ(traces("sample_ratio = 1").sample_ratio, 1.0);
  EXPECT_EQ(traces("max_queue_spans = 10").max_queue_spans, 10);
  EXPECT_EQ(refusal("[traces]\nsample_ratio = 1.5").first, "traces.sample_ratio");
  EXPECT_EQ(refusal("[traces]\nsample_ratio = -0.1").first, "traces.sample_ratio");
  EXPECT_EQ(refusal("[traces]\nsample_ratio = \"all\"").first, "traces.sample_ratio");
  EXPECT_EQ(refusal("[traces]\nmax_queue_spans = 0").first, "traces.max_queue_spans");
  EXPECT_EQ(refusal("[traces]\nbatch = 3").first, "traces.batch");
}

TEST(TelemetryConfigTest, LogFormatIsTextOrJson) {
  EXPECT_EQ(parse("[log]\nformat = \"json\"").log.format, LogFormat::Json);
  EXPECT_EQ(parse("[log]\nformat = \"text\"").log.format, LogFormat::Text);
  EXPECT_EQ(refusal("[log]\nformat = \"JSON\"").first, "log.format");
  EXPECT_EQ(refusal("[log]\nlevel = \"info\"").first, "log.level");
}

TEST(TelemetryConfigTest, AReloadKeepsTheExporterAndTakesTheRatio) {
  const Config running = parse("[traces]\nendpoint = \"https://a.example.com\"\nsample_ratio = 1");
  Config next = parse(
      "[traces]\nendpoint = \"https://b.example.com\"\nsample_ratio = 0.5\n[log]\nformat = "
      "\"json\"");
  const auto changed = keepRestartOnly(next, running);
  EXPECT_EQ(changed, (std::vector<std::string>{"traces.endpoint", "log.format"}));
  EXPECT_EQ(next.traces.endpoint->host, "a.example.com");
  EXPECT_EQ(next.traces.sample_ratio, 0.5);
  EXPECT_EQ(next.log.format, LogFormat::Text);
}

}  // namespace
}  // namespace tollgate::config
