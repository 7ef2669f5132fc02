#include "config/config.hpp"

#include <gtest/gtest.h>

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
  EXPECT_DOUBLE_EQ(m->output_cost_per_token, 6e-7);
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
        BadCase{"auth", "[gateway]\nauth = \"required\"\n" + kEcho, "gateway.auth", "open"},
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

struct RefusedValue {
  std::string toml;
  std::string key;
  std::string reason_part;
};

TEST(ConfigValues, RefusesWhatServeWouldRefuseOrReadDifferently) {
  const std::string api_base = "models.m.providers.p.api_base";
  const std::vector<RefusedValue> cases{
      {withListen("999.1.1.1:0"), "gateway.listen", "IPv4"},
      {withListen("127.0.0.1: 80"), "gateway.listen", "port"},
      {withListen("127.0.0.1:+80"), "gateway.listen", "port"},
      {withListen("127.0.0.1:65536"), "gateway.listen", "port"},
      {withListen("::1:80"), "gateway.listen", "brackets"},
      {withListen("[::g]:80"), "gateway.listen", "IPv6"},
      {withListen("example.com:80"), "gateway.listen", "IPv4"},
      {withProvider("api_base=\"http://127.0.0.1:99999/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://127.0.0.1:0/v1\""), api_base, "port"},
      {withProvider("api_base=\"http://[::1/v1\""), api_base, "valid URL"},
      {withProvider("api_base=\"http://127.0.0.1?x/v1\""), api_base, "query"},
      {withProvider("api_base=\"http://x/v1?\""), api_base, "query"},
      {withProvider("api_base=\"http://x/v1#f\""), api_base, "fragment"},
      {withProvider("api_base=\"http://u:p@x/v1\""), api_base, "credentials"},
      {withProvider("api_base=\"http://ex\u00e4mple.com/v1\""), api_base, ""},
      {withProvider("api_base=\"http://ex%41mple.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://-x.com/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://[v1.x]/v1\""), api_base, "host"},
      {withProvider("api_base=\"http://x/a/../v1\""), api_base, ".."},
      {withProvider("api_base=\"http://x/a%2Fb\""), api_base, "percent"},
      {withProvider("api_base=\"http://x\"\nconnect_timeout_ms=100\nfirst_byte_timeout_ms=900\n"
                    "total_timeout_ms=800"),
       "models.m.providers.p.first_byte_timeout_ms", "total_timeout_ms (800)"},
      {withProvider("api_base=\"http://x\"\nconnect_timeout_ms=900\ntotal_timeout_ms=800"),
       "models.m.providers.p.connect_timeout_ms", "total_timeout_ms"},
      {withProvider("api_base=\"http://x\"\nfirst_byte_timeout_ms=700000"),
       "models.m.providers.p.first_byte_timeout_ms", "total_timeout_ms (600000)"},
  };
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

TEST(ConfigValues, AcceptsListenAddressesAndUrlsAsWritten) {
  EXPECT_EQ(parseConfig(withListen("localhost:8080"), "ok.toml", fakeEnv).gateway.host,
            "127.0.0.1");
  EXPECT_EQ(parseConfig(withListen("[::1]:0"), "ok.toml", fakeEnv).gateway.host, "::1");
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
       }) {
    const Config c = parseConfig(withProvider("api_base=\"" + u.text + "\""), "ok.toml", fakeEnv);
    const UpstreamUrl& got = c.models.at(0).providers.at(0).api_base;
    EXPECT_EQ(got.tls, u.tls) << u.text;
    EXPECT_EQ(got.host, u.host) << u.text;
    EXPECT_EQ(got.port, u.port) << u.text;
    EXPECT_EQ(got.path, u.path) << u.text;
  }
  const Config pooled = parseConfig(withProvider("api_base=\"http://x\"\npool_idle_timeout_ms=300"),
                                    "ok.toml", fakeEnv);
  EXPECT_EQ(pooled.models.at(0).providers.at(0).pool_idle_timeout, Millis(300));
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
