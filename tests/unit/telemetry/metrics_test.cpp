// The metrics: money summed as exact integers and turned into the double nearest the exact sum,
// team labels capped; who may scrape (allowed sources, the bearer token); an exchange's record
// in the text format, its label values from the configuration only; series in turn apart.
#include "telemetry/metrics.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "routing/breaker.hpp"
#include "telemetry/metrics_access.hpp"
#include "telemetry/money_counters.hpp"

namespace tollgate::telemetry {
namespace {

constexpr std::int64_t kPicoPerUsd = 1'000'000'000'000;

store::SpendRow row(std::string model, std::string team, std::int64_t cost,
                    std::int64_t uncollected = 0) {
  store::SpendRow r;
  r.model = std::move(model);
  r.team = std::move(team);
  r.cost = cost;
  r.uncollected = uncollected;
  return r;
}

config::Config withMetrics(std::string_view metrics) {
  const std::string toml = std::string("[metrics]\n") + std::string(metrics) +
                           "\n[models.echo]\nrouting = [\"local\"]\n"
                           "[models.echo.providers.local]\ntype = \"dummy\"\n";
  return config::parseConfig(toml, "test.toml", [](const std::string& name) {
    return name == "METRICS_TOKEN" ? std::optional<std::string>("s3cret-token-0123456789")
                                   : std::nullopt;
  });
}

TEST(UsdFromPico, IsTheDoubleNearestTheExactAmount) {
  EXPECT_EQ(usdFromPico(0), 0.0);
  EXPECT_EQ(usdFromPico(kPicoPerUsd), 1.0);
  EXPECT_EQ(usdFromPico(1), 1e-12);
  EXPECT_EQ(usdFromPico(-1'500'000'000'000), -1.5);
  // Past 2^53 pico-USD (about 9,007 USD) a double cannot hold every pico-USD: the nearest one.
  const __int128 big = static_cast<__int128>(123'456'789) * kPicoPerUsd + 1;
  EXPECT_EQ(usdFromPico(big), std::strtod("123456789.000000000001", nullptr));
  const __int128 huge = static_cast<__int128>(INT64_MAX) * 1000 + 7;
  EXPECT_EQ(usdFromPico(huge), std::strtod("9223372036.854775807007", nullptr));
}

TEST(MoneyCounters, SumExactlyWhereDoublesWouldDrift) {
  MoneyCounters money({false, 100, ""});
  // A million charges of 0.1 USD and one of a pico-USD: 100,000.000000000001 USD exactly, where
  // a double summed one by one drifts.
  double drifting = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    money.spent(row("m", "t", kPicoPerUsd / 10, 1));
    drifting += 0.1;
  }
  money.spent(row("m", "t", 1));
  const auto families = money.collect();
  ASSERT_EQ(families.at(0).name, "tollgate_cost_usd_total");
  ASSERT_EQ(families.at(0).metric.size(), 1U);
  const double cost = families.at(0).metric.at(0).counter.value;
  EXPECT_EQ(cost, std::strtod("100000.000000000001", nullptr));
  EXPECT_NE(cost, drifting);
  EXPECT_EQ(families.at(1).name, "tollgate_uncollected_usd_total");
  EXPECT_EQ(families.at(1).metric.at(0).counter.value, 1e-6);
  // Without team labels a series is a model's.
  ASSERT_EQ(families.at(0).metric.at(0).label.size(), 1U);
  EXPECT_EQ(families.at(0).metric.at(0).label.at(0).value, "m");
}

TEST(MoneyCounters, NameAtMostMaxTeamsThenOther) {
  MoneyCounters money({true, 2, "open"});
  money.spent(row("m", "a", 1));
  money.spent(row("m", "b", 2));
  money.spent(row("m", "c", 4));
  money.spent(row("m", "d", 8));
  money.spent(row("m", "a", 16));
  money.spent(row("m", "", 32));  // Open mode: the open team, past the cap.
  std::map<std::string, double> by_team;
  const auto families = money.collect();
  for (const auto& m : families.at(0).metric) {
    by_team[m.label.at(1).value] = m.counter.value;
  }
  EXPECT_EQ(by_team,
            (std::map<std::string, double>{{"a", 17e-12}, {"b", 2e-12}, {"other", 44e-12}}));
}

TEST(MayScrape, AnAllowedSourceOrTheBearerToken) {
  const config::Config defaults = withMetrics("");
  EXPECT_TRUE(mayScrape(defaults.metrics, "127.0.0.1", ""));
  EXPECT_TRUE(mayScrape(defaults.metrics, "127.8.9.10", ""));
  EXPECT_TRUE(mayScrape(defaults.metrics, "::1", ""));
  EXPECT_FALSE(mayScrape(defaults.metrics, "10.0.0.1", ""));
  EXPECT_FALSE(mayScrape(defaults.metrics, "not an address", ""));
  // No token configured: none is accepted.
  EXPECT_FALSE(mayScrape(defaults.metrics, "10.0.0.1", "Bearer "));

  const config::Config c =
      withMetrics("allow = [\"192.0.2.0/24\"]\ntoken = \"env::METRICS_TOKEN\"");
  EXPECT_FALSE(mayScrape(c.metrics, "127.0.0.1", ""));
  EXPECT_TRUE(mayScrape(c.metrics, "192.0.2.7", ""));
  EXPECT_TRUE(mayScrape(c.metrics, "10.0.0.1", "Bearer s3cret-token-0123456789"));
  EXPECT_TRUE(mayScrape(c.metrics, "10.0.0.1", "bearer s3cret-token-0123456789"));
  EXPECT_FALSE(mayScrape(c.metrics, "10.0.0.1", "Bearer s3cret-token-012345678"));
  EXPECT_FALSE(mayScrape(c.metrics, "10.0.0.1", "Bearer s3cret-token-01234567890"));
  EXPECT_FALSE(mayScrape(c.metrics, "10.0.0.1", "Basic s3cret-token-0123456789"));
  EXPECT_FALSE(mayScrape(c.metrics, "10.0.0.1", "s3cret-token-0123456789"));
}

TEST(MetricsConfig, IsChecked) {
  EXPECT_THROW(withMetrics("allow = [\"10.0.0.1/8\"]"), config::ConfigError);
  EXPECT_THROW(withMetrics("token = \"plain-text-token-here\""), config::ConfigError);
  EXPECT_THROW(withMetrics("token = \"env::UNSET_VARIABLE\""), config::ConfigError);
  EXPECT_THROW(withMetrics("max_teams = 0"), config::ConfigError);
  EXPECT_THROW(withMetrics("colour = \"red\""), config::ConfigError);
  const config::Config c = withMetrics("team_labels = true\nmax_teams = 3");
  EXPECT_TRUE(c.metrics.team_labels);
  EXPECT_EQ(c.metrics.max_teams, 3);
}

/// A gateway with metrics on, the `echo` model and one worker's observer.
class ExchangeMetrics : public ::testing::Test {
 protected:
  const config::Config c = withMetrics("");
  const routing::Breakers breakers{c};
  Metrics metrics{c};
  exchange::Observer& worker = metrics.addWorker();
};

/// The text format's line of `tollgate_requests_total` for these labels and count.
std::string requestsLine(std::string_view model, std::string_view provider, std::string_view route,
                         std::string_view status_class, int count) {
  return "tollgate_requests_total{model=\"" + std::string(model) + "\",provider=\"" +
         std::string(provider) + "\",route=\"" + std::string(route) + "\",status_class=\"" +
         std::string(status_class) + "\"} " + std::to_string(count);
}

TEST_F(ExchangeMetrics, AnExchangeIsCountedUnderItsConfiguredLabels) {
  exchange::RequestContext ctx(c, "req");
  ctx.route = "/v1/chat/completions";
  ctx.model = "a client's own text";  // Never a label: the configured model that served is.
  ctx.served = c.findModel("echo");
  ctx.provider = "local";
  ctx.status = 200;
  ctx.usage.prompt_tokens = 10;
  ctx.usage.completion_tokens = 5;
  exchange::AttemptRecord& attempt = ctx.attempt_log.emplace_back();
  attempt.provider = "local";
  attempt.started = std::chrono::microseconds(10);
  attempt.first_byte = std::chrono::microseconds(200);
  attempt.ended = std::chrono::microseconds(900);
  attempt.status = 200;
  ctx.cache = exchange::CacheOutcome::Miss;
  ctx.bytes_out = 1000;  // Not the cache's: a miss was answered upstream.
  worker.ended(ctx);
  worker.ended(ctx);
  exchange::RequestContext lost(c, "req-2");
  lost.status = 404;
  worker.ended(lost);
  exchange::RequestContext hit(c, "req-3");
  hit.route = ctx.route;
  hit.served = c.findModel("echo");
  hit.status = 200;
  hit.cache = exchange::CacheOutcome::Hit;
  hit.bytes_out = 321;
  worker.ended(hit);

  const std::string text = metrics.scrape(c, breakers);
  EXPECT_NE(text.find(requestsLine("echo", "local", "/v1/chat/completions", "2xx", 2)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(requestsLine("unknown", "none", "unmatched", "4xx", 1)), std::string::npos);
  EXPECT_NE(text.find("gen_ai_client_token_usage_sum{gen_ai_operation_name=\"chat\",gen_ai_"
                      "provider_name=\"local\",gen_ai_request_model=\"echo\",gen_ai_token_type="
                      "\"input\"} 20"),
            std::string::npos);
  EXPECT_NE(text.find("tollgate_upstream_attempts_total{model=\"echo\",provider=\"local\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("tollgate_upstream_retries_total{model=\"echo\",provider=\"local\"} 0"),
            std::string::npos);
  EXPECT_NE(text.find("tollgate_cache_lookups_total{outcome=\"miss\"} 2"), std::string::npos);
  EXPECT_NE(text.find("tollgate_cache_lookups_total{outcome=\"hit\"} 1"), std::string::npos);
  EXPECT_NE(text.find("tollgate_cache_served_bytes_total 321\n"), std::string::npos) << text;
  EXPECT_NE(text.find("tollgate_circuit_breaker_state{model=\"echo\",provider=\"local\",state="
                      "\"closed\"} 1"),
            std::string::npos);
  EXPECT_EQ(text.find("a client's own text"), std::string::npos);
}

TEST_F(ExchangeMetrics, SeriesInTurnAreCountedApart) {
  exchange::RequestContext ok(c, "req-ok");
  ok.route = "/v1/chat/completions";
  ok.served = c.findModel("echo");
  ok.provider = "local";
  ok.status = 200;
  exchange::RequestContext failed(c, "req-failed");
  failed.route = "/v1/embeddings";
  failed.served = ok.served;
  failed.provider = "local";
  failed.status = 502;
  failed.error_code = "upstream_error";
  for (int i = 0; i < 3; ++i) {
    worker.ended(ok);
    if (i < 2) {
      worker.ended(failed);
    }
  }
  worker.ended(ok);

  const std::string text = metrics.scrape(c, breakers);
  EXPECT_NE(text.find(requestsLine("echo", "local", "/v1/chat/completions", "2xx", 4)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(requestsLine("echo", "local", "/v1/embeddings", "5xx", 2)), std::string::npos)
      << text;
}

}  // namespace
}  // namespace tollgate::telemetry
