// The provider types' tables: what each takes, its defaults, and the mistakes each names.
#include "config/provider_config.hpp"

#include <gtest/gtest.h>

namespace tollgate::config {
namespace {

std::optional<std::string> env(const std::string& name) {
  if (name == "KEY" || name == "SECRET" || name == "TOKEN") {
    return "value-of-" + name + "-0123456789";
  }
  return std::nullopt;
}

Provider parse(const std::string& table) {
  const Config c =
      parseConfig("[models.m]\nrouting=[\"p\"]\n[models.m.providers.p]\n" + table, "c.toml", env);
  return c.models.front().providers.front();
}

/// The refusal of `table`: its key (without the models.m.providers.p prefix) and reason.
std::pair<std::string, std::string> refusal(const std::string& table) {
  try {
    parse(table);
  } catch (const ConfigError& e) {
    const std::string prefix = "models.m.providers.p.";
    const std::string key = e.key().starts_with(prefix) ? e.key().substr(prefix.size()) : e.key();
    return {key, e.reason()};
  }
  ADD_FAILURE() << "accepted: " << table;
  return {};
}

TEST(ProviderConfigTest, GeminiDefaultsToGoogleAi) {
  const Provider p =
      parse("type = \"gemini\"\nmodel = \"gemini-2.5-flash\"\napi_key = \"env::KEY\"\n");
  EXPECT_EQ(p.type, ProviderType::Gemini);
  EXPECT_TRUE(p.api_base.tls);
  EXPECT_EQ(p.api_base.host, "generativelanguage.googleapis.com");
  EXPECT_EQ(p.api_base.path, "/v1beta");
  EXPECT_EQ(p.api_key, "value-of-KEY-0123456789");
}

TEST(ProviderConfigTest, AzureNeedsItsResourceAndApiVersion) {
  const Provider p = parse(
      "type = \"azure\"\napi_base = \"https://res.openai.azure.com\"\nmodel = \"gpt4o-prod\"\n"
      "api_version = \"2024-10-21\"\napi_key = \"env::KEY\"\n");
  EXPECT_EQ(p.type, ProviderType::Azure);
  EXPECT_EQ(p.api_version, "2024-10-21");
  EXPECT_EQ(refusal("type = \"azure\"\nmodel = \"d\"\napi_version = \"1\"\n").first, "api_base");
  EXPECT_EQ(refusal("type = \"azure\"\napi_base = \"https://r.openai.azure.com\"\nmodel = \"d\"\n"),
            (std::pair<std::string, std::string>{
                "api_version", "is required for type \"azure\" (e.g. \"2024-10-21\")"}));
  EXPECT_EQ(refusal("type = \"azure\"\napi_base = \"https://r.openai.azure.com\"\nmodel = \"d\"\n"
                    "api_version = \"2024&x=1\"\n")
                .first,
            "api_version");
}

TEST(ProviderConfigTest, BedrockSignsForItsRegion) {
  const Provider p = parse(
      "type = \"bedrock\"\nregion = \"eu-west-3\"\nmodel = \"anthropic.claude-3-haiku\"\n"
      "access_key_id = \"AKIDEXAMPLE\"\nsecret_access_key = \"env::SECRET\"\n"
      "session_token = \"env::TOKEN\"\n");
  EXPECT_EQ(p.type, ProviderType::Bedrock);
  EXPECT_EQ(p.api_base.host, "bedrock-runtime.eu-west-3.amazonaws.com");
  EXPECT_EQ(p.region, "eu-west-3");
  EXPECT_EQ(p.aws.access_key_id, "AKIDEXAMPLE");
  EXPECT_EQ(p.aws.secret_access_key, "value-of-SECRET-0123456789");
  EXPECT_EQ(p.aws.session_token, "value-of-TOKEN-0123456789");

  const Provider from_host = parse(
      "type = \"bedrock\"\napi_base = \"https://bedrock-runtime.us-east-2.amazonaws.com\"\n"
      "model = \"m\"\ncredentials_file = \"/etc/aws/credentials\"\nprofile = \"gateway\"\n");
  EXPECT_EQ(from_host.region, "us-east-2");
  EXPECT_EQ(from_host.aws.credentials_file, "/etc/aws/credentials");
  EXPECT_EQ(from_host.aws.profile, "gateway");

  const Provider bearer = parse(
      "type = \"bedrock\"\napi_base = \"http://127.0.0.1:9\"\nmodel = \"m\"\napi_key = "
      "\"env::KEY\"\n");
  EXPECT_TRUE(bearer.region.empty());
}

TEST(ProviderConfigTest, BedrockMistakesNameTheirKey) {
  const std::string base = "type = \"bedrock\"\nmodel = \"m\"\n";
  EXPECT_EQ(refusal(base + "access_key_id = \"A\"\nsecret_access_key = \"env::SECRET\"\n").first,
            "region");
  EXPECT_EQ(refusal(base + "region = \"Us East\"\napi_key = \"env::KEY\"\n").first, "region");
  EXPECT_EQ(refusal(base + "region = \"us-east-1\"\n").first, "access_key_id");
  EXPECT_EQ(refusal(base + "region = \"us-east-1\"\naccess_key_id = \"A\"\n").first,
            "secret_access_key");
  EXPECT_EQ(refusal(base + "region = \"us-east-1\"\nsecret_access_key = \"plain\"\n").first,
            "secret_access_key");  // Secrets come from the environment.
  EXPECT_EQ(refusal(base + "region = \"us-east-1\"\napi_key = \"env::KEY\"\n"
                           "credentials_file = \"/f\"\n")
                .first,
            "api_key");
  EXPECT_EQ(
      refusal(base + "region = \"us-east-1\"\napi_key = \"env::KEY\"\nprofile = \"x\"\n").first,
      "profile");
  EXPECT_EQ(refusal(base + "api_base = \"http://127.0.0.1:9\"\ncredentials_file = \"/f\"\n").first,
            "region");  // A loopback mock names no region: signing needs one.
}

TEST(ProviderConfigTest, KeysOfOtherTypesAreRefused) {
  EXPECT_EQ(refusal("type = \"openai\"\napi_base = \"http://127.0.0.1:9\"\nmodel = \"m\"\n"
                    "api_version = \"1\"\n"),
            (std::pair<std::string, std::string>{
                "api_version", "applies only to type \"anthropic\" and \"azure\""}));
  EXPECT_EQ(refusal("type = \"gemini\"\nmodel = \"m\"\nregion = \"us-east-1\"\n").first, "region");
  EXPECT_EQ(refusal("type = \"vertex\"\n").second,
            R"(must be "openai", "anthropic", "azure", "gemini", "bedrock" or "dummy")");
  EXPECT_EQ(refusal("model = \"m\"\n").first, "type");
}

}  // namespace
}  // namespace tollgate::config
