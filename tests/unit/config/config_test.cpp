#include "config/config.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <utility>

namespace tollgate::config {
namespace {

std::optional<std::string> fakeEnv(const std::string& name) {
  if (name == "UPSTREAM_KEY") {
    return "sk-upstream";
  }
  if (name == "BROKEN_KEY") {
    return "sk-up\r\nX-Injected: 1";
  }
  return std::nullopt;
}

constexpr std::string_view kValid = R"(
[gateway]
listen = "127.0.0.1:0"
workers = 2
max_body_bytes = 2048
header_timeout_ms = 500

[models.gpt_4o_mini]
display_name = "GPT-4o mini"
owned_by = "openai"
created = 1700000000
security = ["zdr", "tee"]
input_cost_per_token = 0.00000015
output_cost_per_token = 6e-7
max_input_tokens = 128000
max_output_tokens = 16384
input_modalities = ["text", "image"]
model_info = { family = "gpt-4o", context = 128000 }
routing = ["primary", "backup"]

[models.gpt_4o_mini.providers.primary]
type = "openai"
api_base = "https://api.example.com/v1/"
model = "gpt-4o-mini"
api_key = "env::UPSTREAM_KEY"

[models.gpt_4o_mini.providers.backup]
type = "openai"
api_base = "http://[::1]:8000"
model = "m"
first_byte_timeout_ms = 250

[models.echo]
routing = ["local"]
[models.echo.providers.local]
type = "dummy"
)";

TEST(Config, ParsesAValidFile) {
  const Config c = parseConfig(kValid, "t.toml", fakeEnv);
  EXPECT_EQ(c.gateway.host, "127.0.0.1");
  EXPECT_EQ(c.gateway.port, 0);
  EXPECT_EQ(c.gateway.workers, 2U);
  EXPECT_EQ(c.gateway.max_body_bytes, 2048U);
  EXPECT_EQ(c.gateway.header_timeout, Millis(500));
  ASSERT_EQ(c.models.size(), 2U);
  EXPECT_EQ(c.models[0].id, "echo");  // sorted
  const Model* m = c.findModel("gpt_4o_mini");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(m->tee);
  EXPECT_TRUE(m->zdr);
  EXPECT_EQ(m->prices.base.input, 150'000);  // pico-USD, exact
  EXPECT_EQ(m->prices.base.output, 600'000);
  EXPECT_EQ(m->input_modalities, (std::vector<std::string>{"text", "image"}));
  EXPECT_EQ(m->output_modalities, (std::vector<std::string>{"text"}));
  EXPECT_NE(m->model_info_json.find("\"family\":\"gpt-4o\""), std::string::npos);
  ASSERT_EQ(m->providers.size(), 2U);
  EXPECT_EQ(m->providers[0].name, "primary");
  EXPECT_TRUE(m->providers[0].api_base.tls);
  EXPECT_EQ(m->providers[0].api_base.host, "api.example.com");
  EXPECT_EQ(m->providers[0].api_base.port, "443");
  EXPECT_EQ(m->providers[0].api_base.path, "/v1");
  EXPECT_EQ(m->providers[0].api_key, "sk-upstream");
  EXPECT_EQ(m->providers[1].api_base.host, "::1");
  EXPECT_EQ(m->providers[1].api_base.port, "8000");
  EXPECT_EQ(m->providers[1].api_base.path, "");
  EXPECT_EQ(m->providers[1].first_byte_timeout, Millis(250));
  EXPECT_EQ(c.findModel("nope"), nullptr);
}

TEST(Config, ReadsTheCacheTableAndDefaultsToADayOfIdempotency) {
  const Config c = parseConfig(
      "[cache]\nmemory_bytes = 1024\nteam_max_bytes = 0\n"
      "retention_seconds = 60\nidempotency_window_seconds = 2\n"
      "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\n"
      "type=\"dummy\"\n",
      "t.toml", fakeEnv);
  EXPECT_EQ(c.cache.memory_bytes, 1024);
  EXPECT_EQ(c.cache.team_max_bytes, 0);
  EXPECT_EQ(c.cache.retention_seconds, 60);
  EXPECT_EQ(c.cache.idempotency_window_seconds, 2);
  EXPECT_EQ(defaultConfig().cache.idempotency_window_seconds, 24 * 3600);
}

TEST(Config, ReadsTrustedProxiesAndTheAuditRetention) {
  const Config c = parseConfig(
      "[gateway]\ntrusted_proxies = [\"10.0.0.0/8\", \"::1\"]\n"
      "[storage]\naudit_retention_days = 30\n"
      "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n",
      "t.toml", fakeEnv);
  ASSERT_EQ(c.gateway.trusted_proxies.size(), 2u);
  EXPECT_EQ(c.gateway.trusted_proxies[0].prefix, 8u);
  EXPECT_EQ(c.storage.audit_retention_days, 30);
  EXPECT_TRUE(defaultConfig().gateway.trusted_proxies.empty());
  EXPECT_EQ(defaultConfig().storage.audit_retention_days, 0);
}

TEST(Config, EmbeddedDefaultServesEcho) {
  const Config c = defaultConfig();
  EXPECT_EQ(c.gateway.port, 8080);
  ASSERT_NE(c.findModel("echo"), nullptr);
  EXPECT_EQ(c.findModel("echo")->providers.at(0).type, ProviderType::Dummy);
}

struct BadCase {
  std::string name;
  std::string toml;
  std::string key;
  std::string reason_part;
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class ConfigErrors : public testing::TestWithParam<BadCase> {};

TEST_P(ConfigErrors, NameFileKeyAndReason) {
  const BadCase& c = GetParam();
  try {
    parseConfig(c.toml, "bad.toml", fakeEnv);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), "bad.toml");
    EXPECT_EQ(e.key(), c.key);
    EXPECT_NE(e.reason().find(c.reason_part), std::string::npos) << e.what();
  }
}

const std::string kEcho =
    "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n";

INSTANTIATE_TEST_SUITE_P(
    All, ConfigErrors,
    testing::Values(
        BadCase{"syntax", "[gateway\n", "line 1", ""},
        BadCase{"unknown_top", "colour = 1\n" + kEcho, "colour", "unknown key"},
        BadCase{"unknown_gateway", "[gateway]\nlisten_port = 1\n" + kEcho, "gateway.listen_port",
                "unknown key"},
        BadCase{"bad_listen", "[gateway]\nlisten = \"8080\"\n" + kEcho, "gateway.listen",
                "HOST:PORT"},
        BadCase{"bad_port", "[gateway]\nlisten = \"127.0.0.1:70000\"\n" + kEcho, "gateway.listen",
                "port"},
        BadCase{"auth", "[gateway]\nauth = \"closed\"\n" + kEcho, "gateway.auth", "required"},
        BadCase{"trusted_proxy_host_bits",
                "[gateway]\ntrusted_proxies = [\"10.0.0.1/8\"]\n" + kEcho,
                "gateway.trusted_proxies", "10.0.0.0/8"},
        BadCase{"trusted_proxy_name", "[gateway]\ntrusted_proxies = [\"proxy.local\"]\n" + kEcho,
                "gateway.trusted_proxies", "not an address"},
        BadCase{"audit_retention", "[storage]\naudit_retention_days = -1\n" + kEcho,
                "storage.audit_retention_days", ""},
        BadCase{"cache_unknown", "[cache]\nttl = 5\n" + kEcho, "cache.ttl", "unknown key"},
        BadCase{"cache_memory", "[cache]\nmemory_bytes = -1\n" + kEcho, "cache.memory_bytes", ""},
        BadCase{"idempotency_window", "[cache]\nidempotency_window_seconds = 0\n" + kEcho,
                "cache.idempotency_window_seconds", ""},
        BadCase{"storage_scheme", "[storage]\nurl = \"mysql://x\"\n" + kEcho, "storage.url",
                "sqlite://"},
        BadCase{"storage_password", "[storage]\nurl = \"postgresql://u:pw@127.0.0.1/db\"\n" + kEcho,
                "storage.url", "PGPASSWORD"},
        BadCase{"storage_secret_raw", "[storage]\nserver_secret = \"abc\"\n" + kEcho,
                "storage.server_secret", "env::"},
        BadCase{"postgres_needs_secret",
                "[storage]\nurl = \"postgresql://u@127.0.0.1/db\"\n" + kEcho,
                "storage.server_secret", "required"},
        BadCase{"negative_timeout", "[gateway]\nidle_timeout_ms = 0\n" + kEcho,
                "gateway.idle_timeout_ms", "between"},
        BadCase{"no_models", "[gateway]\n", "models", "at least one"},
        BadCase{"bad_id_dash", "[models.gpt-4o]\nrouting=[\"l\"]\n", "models.gpt-4o", "lowercase"},
        BadCase{"bad_id_upper", "[models.Echo]\nrouting=[\"l\"]\n", "models.Echo", "lowercase"},
        BadCase{"bad_id_double_underscore", "[models.a__b]\nrouting=[\"l\"]\n", "models.a__b",
                "lowercase"},
        BadCase{"unknown_model_key", "[models.echo]\ncolor=1\nrouting=[\"l\"]\n",
                "models.echo.color", "unknown key"},
        BadCase{"no_routing", "[models.echo]\n[models.echo.providers.l]\ntype=\"dummy\"\n",
                "models.echo.routing", "required"},
        BadCase{"routing_names_missing",
                "[models.echo]\nrouting=[\"x\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n",
                "models.echo.providers.l", "not listed"},
        BadCase{"missing_type", "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\n",
                "models.echo.providers.l.type", "required"},
        BadCase{"bad_type",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"x\"\n",
                "models.echo.providers.l.type", "openai"},
        BadCase{"no_api_base",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"openai\"\nmodel="
                "\"m\"\n",
                "models.echo.providers.l.api_base", "required"},
        BadCase{"ftp_api_base",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"openai\"\nmodel="
                "\"m\"\napi_base=\"ftp://x\"\n",
                "models.echo.providers.l.api_base", "http"},
        BadCase{"literal_key",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"openai\"\nmodel="
                "\"m\"\napi_base=\"http://x\"\napi_key=\"sk-123\"\n",
                "models.echo.providers.l.api_key", "environment"},
        BadCase{"api_base_with_space",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"openai\"\nmodel="
                "\"m\"\napi_base=\"http://x/v1 HTTP/1.0\"\n",
                "models.echo.providers.l.api_base", "control"},
        BadCase{"key_with_line_break",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"openai\"\nmodel="
                "\"m\"\napi_base=\"http://x\"\napi_key=\"env::BROKEN_KEY\"\n",
                "models.echo.providers.l.api_key", "control"},
        BadCase{"unset_env",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"openai\"\nmodel="
                "\"m\"\napi_base=\"http://x\"\napi_key=\"env::NOPE\"\n",
                "models.echo.providers.l.api_key", "NOPE is not set"},
        BadCase{"bad_security",
                "[models.echo]\nsecurity=[\"sgx\"]\nrouting=[\"l\"]\n[models.echo.providers.l]"
                "\ntype=\"dummy\"\n",
                "models.echo.security", "tee"},
        BadCase{"negative_cost",
                "[models.echo]\ninput_cost_per_token=-1.0\nrouting=[\"l\"]\n[models.echo.providers."
                "l]\ntype=\"dummy\"\n",
                "models.echo.input_cost_per_token", ">= 0"},
        BadCase{"negative_zero_cost",
                "[models.echo]\noutput_cost_per_token=-0.0\nrouting=[\"l\"]\n[models.echo."
                "providers.l]\ntype=\"dummy\"\n",
                "models.echo.output_cost_per_token", ">= 0"},
        BadCase{"nan_cost",
                "[models.echo]\noutput_cost_per_token=nan\nrouting=[\"l\"]\n[models.echo."
                "providers.l]\ntype=\"dummy\"\n",
                "models.echo.output_cost_per_token", ">= 0"},
        BadCase{"deep_model_info",
                "[models.echo]\nmodel_info={a=" + std::string(130, '[') + std::string(130, ']') +
                    "}\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n",
                "models.echo.model_info", "deeper than 128"},
        BadCase{"default_above_max",
                "[models.echo]\nmax_output_tokens=100\ndefault_max_tokens=101\nrouting=[\"l\"]\n"
                "[models.echo.providers.l]\ntype=\"dummy\"\n",
                "models.echo.default_max_tokens", "must not exceed max_output_tokens (100)"},
        BadCase{"default_zero",
                "[models.echo]\ndefault_max_tokens=0\nrouting=[\"l\"]\n"
                "[models.echo.providers.l]\ntype=\"dummy\"\n",
                "models.echo.default_max_tokens", ""},
        BadCase{"default_on_embedding",
                "[models.echo]\nendpoint=\"embedding\"\ndefault_max_tokens=10\nrouting=[\"l\"]\n"
                "[models.echo.providers.l]\ntype=\"dummy\"\n",
                "models.echo.default_max_tokens", "only to chat models"},
        BadCase{"pool_idle_on_dummy",
                "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n"
                "pool_idle_timeout_ms=100\n",
                "models.echo.providers.l.pool_idle_timeout_ms", "not used"}),
    [](const testing::TestParamInfo<BadCase>& info) { return info.param.name; });

/// A config whose only model has one OpenAI-type provider with `lines` added to its table.
std::string withProvider(const std::string& lines) {
  return "[models.m]\nrouting=[\"p\"]\n[models.m.providers.p]\ntype=\"openai\"\nmodel=\"x\"\n" +
         lines + "\n";
}

std::string withListen(const std::string& listen) {
  return "[gateway]\nlisten=\"" + listen + "\"\n" + kEcho;
}

/// A host name of `size` characters in labels of at most 63.
std::string hostOfLength(std::size_t size) {
  std::string name;
  while (name.size() + 64 < size) {
    name += std::string(63, 'a') + ".";
  }
  return name + std::string(size - name.size(), 'b');
}

/// The echo model with `key = value` (TOML) in its table.
std::string withCost(const std::string& key, const std::string& value) {
  return "[models.echo]\n" + key + "=" + value +
         "\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n";
}

struct RefusedValue {
  std::string toml;
  std::string key;
  std::string reason_part;
};

/// Each case's configuration is refused, naming its key and a reason with `reason_part` in it.
void expectRefused(const std::vector<RefusedValue>& cases) {
  for (const RefusedValue& c : cases) {
    try {
      parseConfig(c.toml, "bad.toml", fakeEnv);
      ADD_FAILURE() << "accepted: " << c.toml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), c.key) << e.what();
      EXPECT_NE(e.reason().find(c.reason_part), std::string::npos) << e.what();
    }
  }
}

TEST(Config, ReadsTheLeaseBetweenHalfASecondAndEightSeconds) {
  const auto lease = [](const std::string& value) {
    return parseConfig("[gateway]\nlease_ms = " + value +
                           "\n[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\n"
                           "type=\"dummy\"\n",
                       "t.toml", fakeEnv)
        .gateway.lease.count();
  };
  EXPECT_EQ(defaultConfig().gateway.lease.count(), 2'000);
  EXPECT_EQ(lease("500"), 500);
  EXPECT_EQ(lease("8000"), 8'000);
  for (const std::string bad : {"499", "8001", "0", "-1", "\"2000\""}) {
    EXPECT_THROW(lease(bad), ConfigError) << bad;
  }
}

TEST(ConfigValues, RefusesWhatServeWouldRefuseOrReadDifferently) {
  const std::string api_base = "models.m.providers.p.api_base";
  const std::vector<RefusedValue> cases{
      {withListen("999.1.1.1:0"), "gateway.listen", "IPv4"},
      {withListen("127.0.0.1: 80"), "gateway.listen", "port"},
      {withListen("127.0.0.1:+80"), "gateway.listen", "port"},
      {withListen("+80"), "gateway.listen", "HOST:PORT"},
      {withListen(":80"), "gateway.listen", "HOST:PORT"},
      {withListen("127.0.0.1:"), "gateway.listen", "port"},
      {withListen("127.0.0.1:-1"), "gateway.listen", "port"},
      {withListen("127.0.0.1:0x50"), "gateway.listen", "port"},
      {withListen("127.0.0.1:000080"), "gateway.listen", "port"},
      {withListen("127.0.0.1:65536"), "gateway.listen", "port"},
      {withListen("127.0.0.1:99999"), "gateway.listen", "port"},
      {withListen(" 127.0.0.1:80"), "gateway.listen", "IPv4"},
      {withListen("127.1:80"), "gateway.listen", "IPv4"},
      {withListen("::1:80"), "gateway.listen", "brackets"},
      {withListen("[::1]"), "gateway.listen", ""},
      {withListen("[::g]:80"), "gateway.listen", "IPv6"},
      {withListen("[127.0.0.1]:80"), "gateway.listen", "IPv6"},
      {withListen("[fe80::1%eth0]:80"), "gateway.listen", "IPv6"},
      {withListen("example.com:80"), "gateway.listen", "IPv4"},
      {withListen("LOCALHOST:80"), "gateway.listen", "IPv4"},
      {withListen("[localhost]:80"), "gateway.listen", "IPv6"},
      {withProvider("api_base=\"http://127.0.0.1:99999/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://127.0.0.1:65536/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://127.0.0.1:0/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://127.0.0.1:/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://127.0.0.1:000080/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://[::1/v1\""), api_base, "valid URL"},
      {withProvider("api_base=\"http://::1/v1\""), api_base, ""},
      {withProvider("api_base=\"http://127.0.0.1?x/v1\""), api_base, "query"},
      {withProvider("api_base=\"http://x/v1?\""), api_base, "query"},
      {withProvider("api_base=\"http://x/v1#f\""), api_base, "fragment"},
      {withProvider("api_base=\"http://x/v1#\""), api_base, "fragment"},
      {withProvider("api_base=\"http://u:p@x/v1\""), api_base, "credentials"},
      {withProvider("api_base=\"http://@x/v1\""), api_base, "credentials"},
      {withProvider("api_base=\"ftp://x/v1\""), api_base, "http"},
      {withProvider("api_base=\"x/v1\""), api_base, ""},
      {withProvider("api_base=\"http:x/v1\""), api_base, "host"},
      {withProvider("api_base=\"http:///v1\""), api_base, "host"},
      {withProvider("api_base=\"https://\""), api_base, "host"},
      {withProvider("api_base=\"http://ex\u00e4mple.com/v1\""), api_base, ""},
      {withProvider("api_base=\"http://xn--exmple-cua.com/v1/\u00e4\""), api_base, ""},
      {withProvider("api_base=\"http://ex%C3%A4mple.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://ex%41mple.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://ex_ample.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://-x.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://x-.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://a..com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://example.com./v1\""), api_base, "host"},
      {withProvider("api_base=\"http://" + std::string(64, 'a') + ".com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://" + hostOfLength(254) + "/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://[v1.x]/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://999.1.1.1/v1\""), api_base, "IPv4"},
      {withProvider("api_base=\"http://127.1/v1\""), api_base, "IPv4"},
      {withProvider("api_base=\"http://2130706433/v1\""), api_base, "IPv4"},
      {withProvider("api_base=\"http://0x7f000001/v1\""), api_base, "IPv4"},
      {withProvider("api_base=\"http://127.000.0.1/v1\""), api_base, "IPv4"},
      {withProvider("api_base=\"http://x/a/../v1\""), api_base, ".."},
      {withProvider("api_base=\"http://x/v1/..\""), api_base, ".."},
      {withProvider("api_base=\"http://x/v1/./chat\""), api_base, "."},
      {withProvider("api_base=\"http://x/a/%2e%2E/v1\""), api_base, ".."},
      {withProvider("api_base=\"http://x/a%2Fb\""), api_base, "slashes"},
      {withProvider("api_base=\"http://x/a%2fb\""), api_base, "slashes"},
      {withProvider("api_base=\"http://x/a%5Cb\""), api_base, "slashes"},
      {withProvider("api_base=\"http://x/v1\\r\\nX: 1\""), api_base, "control"},
      {withProvider("api_base=\"http://x/v1\\t\""), api_base, "control"},
      {withProvider("api_base=\"http://x\"\nconnect_timeout_ms=100\nfirst_byte_timeout_ms=900\n"
                    "total_timeout_ms=800"),
       "models.m.providers.p.first_byte_timeout_ms", "total_timeout_ms (800)"},
      {withProvider("api_base=\"http://x\"\nconnect_timeout_ms=900\ntotal_timeout_ms=800"),
       "models.m.providers.p.connect_timeout_ms", "total_timeout_ms"},
      {withProvider("api_base=\"http://x\"\nfirst_byte_timeout_ms=700000"),
       "models.m.providers.p.first_byte_timeout_ms", "total_timeout_ms (600000)"},
      {withProvider("api_base=\"http://x\"\ntotal_timeout_ms=4000"),
       "models.m.providers.p.connect_timeout_ms", "total_timeout_ms (4000)"},
      {withProvider("api_base=\"http://x\"\nconnect_timeout_ms=100\ntotal_timeout_ms=5000"),
       "models.m.providers.p.first_byte_timeout_ms", "total_timeout_ms (5000)"},
      {withProvider("api_base=\"http://x\"\npool_idle_timeout_ms=0"),
       "models.m.providers.p.pool_idle_timeout_ms", "between 1 and 86400000"},
      {withProvider("api_base=\"http://x\"\npool_idle_timeout_ms=86400001"),
       "models.m.providers.p.pool_idle_timeout_ms", "between 1 and 86400000"},
      {withProvider("api_base=\"http://x\"\npool_idle_timeout_ms=1.5"),
       "models.m.providers.p.pool_idle_timeout_ms", "integer"},
      {withProvider("api_base=\"http://x\"\npool_idle_timeout_ms=\"4s\""),
       "models.m.providers.p.pool_idle_timeout_ms", "integer"},
      {withCost("input_cost_per_token", "-0.0"), "models.echo.input_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("output_cost_per_token", "-0.0"), "models.echo.output_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("input_cost_per_token", "-1e-9"), "models.echo.input_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("input_cost_per_token", "-1"), "models.echo.input_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("output_cost_per_token", "nan"), "models.echo.output_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("output_cost_per_token", "-nan"), "models.echo.output_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("input_cost_per_token", "inf"), "models.echo.input_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("input_cost_per_token", "-inf"), "models.echo.input_cost_per_token",
       "must be a finite number >= 0"},
      {withCost("input_cost_per_token", "\"0.1\""), "models.echo.input_cost_per_token",
       "must be a number"},
      {withCost("input_cost_per_token", "1e-13"), "models.echo.input_cost_per_token",
       "at most 12 decimal places"},
      {withCost("output_cost_per_token", "0.0000000000015"), "models.echo.output_cost_per_token",
       "at most 12 decimal places"},
      {withCost("output_cost_per_token", "1e7"), "models.echo.output_cost_per_token", "below"},
  };
  expectRefused(cases);
}

/// A model priced $3 in and $15 out per million tokens, with `more` after its prices.
std::string withPrices(const std::string& more) {
  return "[models.echo]\ninput_cost_per_token=0.000003\noutput_cost_per_token=0.000015\n"
         "routing=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n" +
         more;
}

TEST(ConfigValues, CachePricesDefaultToTheInputPriceAndAudioInputToNone) {
  const Config c = parseConfig(withPrices(""), "t.toml", fakeEnv);
  const money::Prices& p = c.findModel("echo")->prices;
  EXPECT_EQ(p.base.cached_input, 3'000'000);
  EXPECT_EQ(p.base.cache_write, 3'000'000);
  EXPECT_EQ(p.base.cache_write_1h, 3'000'000);
  EXPECT_EQ(p.base.output_audio, 15'000'000);
  EXPECT_FALSE(p.input_audio);
  EXPECT_FALSE(p.has_cached_input || p.has_cache_write || p.has_cache_write_1h);
  EXPECT_TRUE(p.tiers.empty());
}

TEST(ConfigValues, ReadsCacheAudioPricesAndTiers) {
  const Config c = parseConfig(
      "[models.echo]\ninput_cost_per_token=0.000003\noutput_cost_per_token=0.000015\n"
      "cached_input_cost_per_token=0.0000003\ncache_write_cost_per_token=0.00000375\n"
      "input_audio_cost_per_token=0.00004\nrouting=[\"l\"]\n"
      "[[models.echo.price_tiers]]\nabove_input_tokens=200000\ninput_cost_per_token=0.000006\n"
      "[[models.echo.price_tiers]]\nabove_input_tokens=1000000\noutput_cost_per_token=0.00003\n"
      "cache_write_1h_cost_per_token=0.00002\n"
      "[models.echo.providers.l]\ntype=\"dummy\"\n",
      "t.toml", fakeEnv);
  const money::Prices& p = c.findModel("echo")->prices;
  EXPECT_EQ(p.base.cached_input, 300'000);
  EXPECT_EQ(p.base.cache_write, 3'750'000);
  EXPECT_EQ(p.base.cache_write_1h, 3'750'000);  // The 5-minute price when left out.
  EXPECT_TRUE(p.input_audio);
  EXPECT_EQ(p.base.input_audio, 40'000'000);
  ASSERT_EQ(p.tiers.size(), 2U);
  // A tier's input kinds default to its own input price, its output to the model's.
  EXPECT_EQ(p.tiers[0].above_input_tokens, 200'000);
  EXPECT_EQ(p.tiers[0].rates.input, 6'000'000);
  EXPECT_EQ(p.tiers[0].rates.cached_input, 6'000'000);
  EXPECT_EQ(p.tiers[0].rates.cache_write_1h, 6'000'000);
  EXPECT_EQ(p.tiers[0].rates.output, 15'000'000);
  EXPECT_EQ(p.tiers[1].rates.input, 3'000'000);  // The model's, when the tier leaves it out.
  EXPECT_EQ(p.tiers[1].rates.output, 30'000'000);
  EXPECT_EQ(p.tiers[1].rates.cache_write_1h, 20'000'000);
  EXPECT_EQ(p.tiers[1].rates.input_audio, 40'000'000);  // Audio is the model's in every tier.
}

TEST(ConfigValues, RefusesNonsensePrices) {
  const std::vector<RefusedValue> cases{
      {withCost("cached_input_cost_per_token", "-1"), "models.echo.cached_input_cost_per_token",
       ">= 0"},
      {withCost("cache_write_1h_cost_per_token", "\"2x\""),
       "models.echo.cache_write_1h_cost_per_token", "number"},
      {withCost("input_audio_cost_per_token", "1e-13"), "models.echo.input_audio_cost_per_token",
       "pico-USD"},
      {withPrices("[[models.echo.price_tiers]]\nabove_input_tokens=0\n"),
       "models.echo.price_tiers[0].above_input_tokens", "between 1"},
      {withPrices("[[models.echo.price_tiers]]\ninput_cost_per_token=0.1\n"),
       "models.echo.price_tiers[0].above_input_tokens", "required"},
      {withPrices("[[models.echo.price_tiers]]\nabove_input_tokens=10\n"
                  "output_cost_per_token=-1\n"),
       "models.echo.price_tiers[0].output_cost_per_token", ">= 0"},
      {withPrices("[[models.echo.price_tiers]]\nabove_input_tokens=10\nlong=1\n"),
       "models.echo.price_tiers[0].long", "unknown key"},
      {withPrices("[[models.echo.price_tiers]]\nabove_input_tokens=10\n"
                  "input_audio_cost_per_token=1\n"),
       "models.echo.price_tiers[0].input_audio_cost_per_token", "unknown key"},
      {withPrices("[[models.echo.price_tiers]]\nabove_input_tokens=10\n"
                  "[[models.echo.price_tiers]]\nabove_input_tokens=10\n"),
       "models.echo.price_tiers[1].above_input_tokens", "greater than the tier before it (10)"},
      {withPrices("[[models.echo.price_tiers]]\nabove_input_tokens=20\n"
                  "[[models.echo.price_tiers]]\nabove_input_tokens=10\n"),
       "models.echo.price_tiers[1].above_input_tokens", "increasing order"},
      {withCost("price_tiers", "1"), "models.echo.price_tiers", "array of tables"},
  };
  expectRefused(cases);
}

TEST(ConfigValues, PricesAreReadExactly) {
  struct Price {
    std::string text;
    money::Pico pico;
  };
  for (const Price& p : std::vector<Price>{{"0.000000075", 75'000},
                                           {"0.00000015", 150'000},
                                           {"1.5e-7", 150'000},
                                           {"0.000000000001", 1},
                                           {"0.1", 100'000'000'000},
                                           {"3", 3'000'000'000'000},
                                           {"0", 0},
                                           {"0.0", 0},
                                           {"+0.0", 0},
                                           {"2", 2'000'000'000'000}}) {
    const Config c = parseConfig(withCost("input_cost_per_token", p.text), "t.toml", fakeEnv);
    EXPECT_EQ(c.findModel("echo")->prices.base.input, p.pico) << p.text;
  }
}

TEST(ConfigValues, AcceptsListenAddressesAsTheListenerBindsThem) {
  struct Listen {
    std::string text;
    std::string host;
    std::uint16_t port;
  };
  for (const Listen& l : std::vector<Listen>{
           {"localhost:0", "127.0.0.1", 0},
           {"localhost:8080", "127.0.0.1", 8080},
           {"127.0.0.1:0", "127.0.0.1", 0},
           {"0.0.0.0:65535", "0.0.0.0", 65535},
           {"10.1.2.3:00080", "10.1.2.3", 80},
           {"[::1]:0", "::1", 0},
           {"[::]:8080", "::", 8080},
           {"[::ffff:127.0.0.1]:1", "::ffff:127.0.0.1", 1},
       }) {
    const Gateway g = parseConfig(withListen(l.text), "ok.toml", fakeEnv).gateway;
    EXPECT_EQ(g.host, l.host) << l.text;
    EXPECT_EQ(g.port, l.port) << l.text;
  }
}

TEST(ConfigValues, AcceptsUrlsAsWritten) {
  struct Url {
    std::string text;
    bool tls;
    std::string host;
    std::string port;
    std::string path;
  };
  for (const Url& u : std::vector<Url>{
           {"https://api.example.com/v1/", true, "api.example.com", "443", "/v1"},
           {"http://127.0.0.1:8000", false, "127.0.0.1", "8000", ""},
           {"http://[::1]:8000/v1", false, "::1", "8000", "/v1"},
           {"HTTP://Example.com/v1", false, "Example.com", "80", "/v1"},
           {"HTTPS://api.example.com", true, "api.example.com", "443", ""},
           {"https://api.example.com/", true, "api.example.com", "443", ""},
           {"http://localhost:65535/v1//", false, "localhost", "65535", "/v1"},
           {"http://vllm-1.internal:080/openai/v1", false, "vllm-1.internal", "80", "/openai/v1"},
           {"http://[::ffff:10.0.0.1]:1/v1", false, "::ffff:10.0.0.1", "1", "/v1"},
           {"http://x/v1/..x/a.b/%20", false, "x", "80", "/v1/..x/a.b/%20"},
           {"http://123.example.com/v1", false, "123.example.com", "80", "/v1"},
           {"http://" + std::string(63, 'a') + ".com", false, std::string(63, 'a') + ".com", "80",
            ""},
           {"http://" + hostOfLength(253), false, hostOfLength(253), "80", ""},
       }) {
    const Config c = parseConfig(withProvider("api_base=\"" + u.text + "\""), "ok.toml", fakeEnv);
    const UpstreamUrl& got = c.models.at(0).providers.at(0).api_base;
    EXPECT_EQ(got.tls, u.tls) << u.text;
    EXPECT_EQ(got.host, u.host) << u.text;
    EXPECT_EQ(got.port, u.port) << u.text;
    EXPECT_EQ(got.path, u.path) << u.text;
  }
}

TEST(ConfigValues, AcceptsTimeoutsUpToTheTotalAndPoolIdle) {
  const Provider defaults = parseConfig(withProvider("api_base=\"http://x\""), "ok.toml", fakeEnv)
                                .models.at(0)
                                .providers.at(0);
  EXPECT_EQ(defaults.pool_idle_timeout, Millis(4'000));
  const Provider p = parseConfig(withProvider("api_base=\"http://x\"\nconnect_timeout_ms=800\n"
                                              "first_byte_timeout_ms=800\ntotal_timeout_ms=800\n"
                                              "pool_idle_timeout_ms=300"),
                                 "ok.toml", fakeEnv)
                         .models.at(0)
                         .providers.at(0);
  EXPECT_EQ(p.connect_timeout, Millis(800));
  EXPECT_EQ(p.first_byte_timeout, Millis(800));
  EXPECT_EQ(p.total_timeout, Millis(800));
  EXPECT_EQ(p.pool_idle_timeout, Millis(300));
  EXPECT_EQ(parseConfig(withProvider("api_base=\"http://x\"\npool_idle_timeout_ms=86400000"),
                        "ok.toml", fakeEnv)
                .models.at(0)
                .providers.at(0)
                .pool_idle_timeout,
            Millis(86'400'000));
}

TEST(IsModelId, LowercaseWordsJoinedByUnderscores) {
  EXPECT_TRUE(isModelId("echo"));
  EXPECT_TRUE(isModelId("gpt_4o_mini"));
  EXPECT_FALSE(isModelId(""));
  EXPECT_FALSE(isModelId("gpt-4o"));
  EXPECT_FALSE(isModelId("openai/gpt_4o"));
  EXPECT_FALSE(isModelId("_echo"));
  EXPECT_FALSE(isModelId("echo_"));
  EXPECT_FALSE(isModelId("Echo"));
}

}  // namespace
}  // namespace tollgate::config

namespace tollgate::config {
namespace {

const std::string kRouted = kEcho + R"(
[models.embed]
endpoint = "embedding"
routing = ["l"]
[models.embed.providers.l]
type = "dummy"
)";

TEST(RoutingConfig, FunctionsVariantsRetriesTimeoutsAndBreakers) {
  const Config c = parseConfig(kRouted + R"(
[models.claude]
max_output_tokens = 8192
retries = { num_retries = 3, max_delay_ms = 2000 }
timeouts = { non_streaming_total_ms = 30000, streaming_first_token_ms = 4000, streaming_total_ms = 90000 }
routing = ["anthropic"]
[models.claude.providers.anthropic]
type = "anthropic"
model = "claude-sonnet-4-5"
api_key = "env::UPSTREAM_KEY"
circuit_breaker = { failures = 2, cooldown_ms = 15000 }
[functions.support_bot]
fallback_variants = ["backup"]
[functions.support_bot.variants.main]
model = "claude"
weight = 0.9
system_prompt = "You are terse."
temperature = 0.2
max_tokens = 300
seed = -4
frequency_penalty = -1.5
retries = { num_retries = 1 }
[functions.support_bot.variants.backup]
model = "echo"
)",
                               "t.toml", fakeEnv);
  const Model& claude = *c.findModel("claude");
  EXPECT_EQ(claude.retries.num_retries, 3);
  EXPECT_EQ(claude.retries.max_delay, Millis(2000));
  EXPECT_EQ(claude.timeouts.streaming_first_token, Millis(4000));
  EXPECT_EQ(claude.timeouts.streaming_total, Millis(90000));
  const Provider& p = claude.providers.at(0);
  EXPECT_EQ(p.type, ProviderType::Anthropic);
  EXPECT_EQ(p.api_base.host, "api.anthropic.com");
  EXPECT_EQ(p.api_base.path, "/v1");
  EXPECT_EQ(p.api_version, "2023-06-01");
  EXPECT_EQ(p.max_output_tokens, 8192);
  EXPECT_EQ(p.default_max_tokens, 8192);
  EXPECT_EQ(p.breaker.failures, 2);
  EXPECT_EQ(p.breaker.cooldown, Millis(15000));
  EXPECT_EQ(c.findModel("echo")->providers.at(0).breaker.failures, 5);
  ASSERT_EQ(c.functions.size(), 1U);
  const Function& f = *c.findFunction("support_bot");
  EXPECT_EQ(f.fallback_variants, std::vector<std::string>{"backup"});
  const Variant& v = *f.findVariant("main");
  EXPECT_EQ(v.model, "claude");
  EXPECT_DOUBLE_EQ(v.weight, 0.9);
  EXPECT_EQ(v.system_prompt, "You are terse.");
  EXPECT_EQ(v.temperature, std::optional(0.2));
  EXPECT_EQ(v.max_tokens, std::optional<std::int64_t>(300));
  EXPECT_EQ(v.seed, std::optional<std::int64_t>(-4));
  EXPECT_EQ(v.frequency_penalty, std::optional(-1.5));
  ASSERT_TRUE(v.retries.has_value());
  EXPECT_EQ(v.retries->num_retries, 1);
  EXPECT_EQ(v.retries->max_delay, Millis(2000));  // The rest from the model's.
  EXPECT_EQ(f.findVariant("backup")->weight, 0);
  EXPECT_EQ(c.findFunction("nope"), nullptr);
}

TEST(RoutingConfig, MistakesNameTheirKey) {
  struct Case {
    std::string toml;
    std::string key;
    std::string reason_part;
  };
  const std::string fn = "[functions.f.variants.a]\nmodel = \"echo\"\n";
  const std::vector<Case> cases = {
      {"[functions.f.variants.a]\nmodel = \"nope\"\nweight = 1\n", "functions.f.variants.a.model",
       "not a configured model"},
      {"[functions.f.variants.a]\nmodel = \"embed\"\nweight = 1\n", "functions.f.variants.a.model",
       "not chat"},
      {fn + "weight = 0\n", "functions.f.variants", "weight above 0"},
      {fn + "weight = -1\n", "functions.f.variants.a.weight", ">= 0"},
      {fn + "weight = 1\ntemperature = 3\n", "functions.f.variants.a.temperature", "from 0 to 2"},
      {fn + "weight = 1\nmax_tokens = 0\n", "functions.f.variants.a.max_tokens", "between 1"},
      {fn + "weight = 1\nsurprise = 1\n", "functions.f.variants.a.surprise", "unknown key"},
      {"[functions.f]\nfallback_variants = [\"z\"]\n" + fn + "weight = 1\n",
       "functions.f.fallback_variants", "not a variant"},
      {"[functions.f]\nvariants = 1\n", "functions.f.variants", "must be a table"},
      {"[functions.Bad]\n", "functions.Bad", "lowercase"},
      {"[functions.f]\n", "functions.f.variants", "is required"},
      {fn + "weight = 1\nretries = { num_retries = 11 }\n",
       "functions.f.variants.a.retries.num_retries", "between 0 and 10"},
      {fn + "weight = 1\ntimeouts = { streaming_first_token_ms = 5, streaming_total_ms = 4 }\n",
       "functions.f.variants.a.timeouts.streaming_first_token_ms", "must not exceed"},
  };
  for (const Case& c : cases) {
    try {
      parseConfig(kRouted + c.toml, "bad.toml", fakeEnv);
      ADD_FAILURE() << "accepted: " << c.toml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), c.key) << e.what();
      EXPECT_NE(e.reason().find(c.reason_part), std::string::npos) << e.what();
    }
  }
  for (const auto& [provider, key, part] :
       {std::tuple{"type = \"anthropic\"", "models.x.providers.p.model", "is required"},
        std::tuple{"type = \"openai\"\napi_base = \"http://h/v1\"\nmodel = \"m\"\n"
                   "api_version = \"2023-06-01\"",
                   "models.x.providers.p.api_version", "only to type \"anthropic\""},
        std::tuple{"type = \"dummy\"\ncircuit_breaker = { failures = -1 }",
                   "models.x.providers.p.circuit_breaker.failures", "between 0"}}) {
    const std::string toml =
        std::string("[models.x]\nrouting = [\"p\"]\n[models.x.providers.p]\n") + provider + "\n";
    try {
      parseConfig(toml, "bad.toml", fakeEnv);
      ADD_FAILURE() << "accepted: " << toml;
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.key(), key) << e.what();
      EXPECT_NE(e.reason().find(part), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tollgate::config
