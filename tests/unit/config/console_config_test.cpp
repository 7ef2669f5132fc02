#include "config/console_config.hpp"

#include <gtest/gtest.h>

namespace tollgate::config {
namespace {

std::optional<std::string> noEnv(const std::string&) { return std::nullopt; }

const std::string kEcho =
    "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n";

Console console(const std::string& table) {
  return parseConfig("[console]\n" + table + "\n" + kEcho, "c.toml", noEnv).console;
}

std::string publicUrl(const std::string& url) {
  return console("public_url = \"" + url + "\"").public_url;
}

/// The refusal of `table`: its key and reason.
std::pair<std::string, std::string> refusal(const std::string& table) {
  try {
    console(table);
  } catch (const ConfigError& e) {
    return {e.key(), e.reason()};
  }
  ADD_FAILURE() << "accepted: " << table;
  return {};
}

TEST(ConsoleConfigTest, PublicUrlIsTheOriginABrowserSends) {
  EXPECT_EQ(publicUrl("https://gw.example.com"), "https://gw.example.com");
  EXPECT_EQ(publicUrl("https://gw.example.com/"), "https://gw.example.com");
  EXPECT_EQ(publicUrl("https://gw.example.com:443"), "https://gw.example.com");
  EXPECT_EQ(publicUrl("https://gw.example.com:443/"), "https://gw.example.com");
  EXPECT_EQ(publicUrl("http://gw.example.com:80"), "http://gw.example.com");
  EXPECT_EQ(publicUrl("https://gw.example.com:"), "https://gw.example.com");
  EXPECT_EQ(publicUrl("https://gw.example.com:80"), "https://gw.example.com:80");
  EXPECT_EQ(publicUrl("http://gw.example.com:443"), "http://gw.example.com:443");
  EXPECT_EQ(publicUrl("HTTPS://GW.Example.COM:8443"), "https://gw.example.com:8443");
  EXPECT_EQ(publicUrl("https://b\u00fccher.example"), "https://xn--bcher-kva.example");
  EXPECT_EQ(publicUrl("https://B\u00dcCHER.example:443/"), "https://xn--bcher-kva.example");
  EXPECT_EQ(publicUrl("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
  EXPECT_EQ(publicUrl("http://[::1]:80"), "http://[::1]");
  EXPECT_TRUE(console("public_url = \"https://gw.example.com:443\"").https());
}

TEST(ConsoleConfigTest, PublicUrlWithAPathOrABadHostIsRefusedPrecisely) {
  const auto [key, reason] = refusal("public_url = \"https://gw.example.com/console\"");
  EXPECT_EQ(key, "console.public_url");
  EXPECT_NE(reason.find("without a path, not \"/console\""), std::string::npos) << reason;
  EXPECT_EQ(refusal("public_url = \"https://bad_host.example\"").first, "console.public_url");
  EXPECT_EQ(refusal("public_url = \"https://b\u00fc_cher.example\"").first, "console.public_url");
  EXPECT_EQ(refusal("public_url = \"https://gw.example.com:99999\"").first, "console.public_url");
}

TEST(ConsoleConfigTest, TeamsPerUserDefaultsToThreeAndZeroLeavesItToTheOperator) {
  EXPECT_EQ(console("").max_teams_per_user, 3);
  EXPECT_EQ(console("max_teams_per_user = 0").max_teams_per_user, 0);
  EXPECT_EQ(console("max_teams_per_user = 50").max_teams_per_user, 50);
  EXPECT_EQ(refusal("max_teams_per_user = -1").first, "console.max_teams_per_user");
}

}  // namespace
}  // namespace tollgate::config
