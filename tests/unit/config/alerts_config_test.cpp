// [alerts]: the webhook's URL (https, or http to loopback; from the file or the environment), its
// secret (from the environment only), the balance amounts read exactly, and what is refused.
#include "config/alerts_config.hpp"

#include <gtest/gtest.h>

#include "config/live_config.hpp"

namespace tollgate::config {
namespace {

constexpr money::Pico kUsd = money::kPicoPerUsd;
const std::string kEcho =
    "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n";

std::optional<std::string> env(const std::string& name) {
  if (name == "HOOK_SECRET") {
    return "whsec_0123456789abcdef";
  }
  if (name == "SHORT_SECRET") {
    return "short";
  }
  if (name == "HOOK_URL") {
    return "https://hooks.example.com/t/0123456789";
  }
  return std::nullopt;
}

Alerts alerts(const std::string& table) {
  return parseConfig("[alerts]\n" + table + "\n" + kEcho, "c.toml", env).alerts;
}

/// The refusal of `table`: its key and reason.
std::pair<std::string, std::string> refusal(const std::string& table) {
  try {
    alerts(table);
  } catch (const ConfigError& e) {
    return {e.key(), e.reason()};
  }
  ADD_FAILURE() << "accepted: " << table;
  return {};
}

const std::string kHook =
    "webhook_url = \"https://hooks.example.com/tollgate\"\nwebhook_secret = \"env::HOOK_SECRET\"\n";

TEST(AlertsConfigTest, NoneByDefault) {
  const Config c = parseConfig(kEcho, "c.toml", env);
  EXPECT_FALSE(c.alerts.webhook_url.has_value());
  EXPECT_TRUE(c.alerts.balance_below.empty());
}

TEST(AlertsConfigTest, AmountsAreReadExactlyLargestFirst) {
  const Alerts a = alerts(kHook + "balance_below_usd = [10, 0, 50, 0.1, \"2.35\"]");
  ASSERT_TRUE(a.webhook_url.has_value());
  EXPECT_EQ(a.webhook_url->host, "hooks.example.com");
  EXPECT_EQ(a.webhook_url->path, "/tollgate");
  EXPECT_EQ(a.webhook_secret, "whsec_0123456789abcdef");
  EXPECT_EQ(a.balance_below, (std::vector<money::Pico>{50 * kUsd, 10 * kUsd, 2'350'000'000'000,
                                                       100'000'000'000, 0}));
}

TEST(AlertsConfigTest, TheUrlMayComeFromTheEnvironment) {
  const Alerts a = alerts("webhook_url = \"env::HOOK_URL\"\nwebhook_secret = \"env::HOOK_SECRET\"");
  EXPECT_EQ(a.webhook_url->path, "/t/0123456789");
  EXPECT_EQ(refusal("webhook_url = \"env::NOPE\"\nwebhook_secret = \"env::HOOK_SECRET\""),
            (std::pair<std::string, std::string>{"alerts.webhook_url",
                                                 "environment variable NOPE is not set"}));
}

TEST(AlertsConfigTest, HttpOnlyToLoopback) {
  EXPECT_EQ(alerts("webhook_url = \"http://127.0.0.1:9000/hook\"\n"
                   "webhook_secret = \"env::HOOK_SECRET\"")
                .webhook_url->port,
            "9000");
  const auto [key, reason] = refusal(
      "webhook_url = \"http://hooks.example.com/x\"\nwebhook_secret = \"env::HOOK_SECRET\"");
  EXPECT_EQ(key, "alerts.webhook_url");
  EXPECT_NE(reason.find("must be https"), std::string::npos) << reason;
}

TEST(AlertsConfigTest, KeyBudgetFractionsAreReadAsPartsPerMillion) {
  const Alerts a = alerts(kHook + "key_budget_fractions = [1, 0.8, 0.5, 0.000001]");
  EXPECT_EQ(a.key_budget_ppm, (std::vector<std::int64_t>{1, 500'000, 800'000, 1'000'000}));
}

TEST(AlertsConfigTest, WrongUsesAreRefusedByKey) {
  struct Case {
    std::string table;
    std::string key;
  };
  const std::vector<Case> cases{
      {"webhook_url = \"https://h.example.com/x\"", "alerts.webhook_secret"},
      {"webhook_url = \"https://h.example.com/x\"\nwebhook_secret = \"whsec_literal_secret\"",
       "alerts.webhook_secret"},
      {"webhook_url = \"https://h.example.com/x\"\nwebhook_secret = \"env::SHORT_SECRET\"",
       "alerts.webhook_secret"},
      {"webhook_secret = \"env::HOOK_SECRET\"", "alerts.webhook_secret"},
      {"balance_below_usd = [10]", "alerts.balance_below_usd"},
      {kHook + "balance_below_usd = 10", "alerts.balance_below_usd"},
      {kHook + "balance_below_usd = [-1]", "alerts.balance_below_usd"},
      {kHook + "balance_below_usd = [0.0000000000001]", "alerts.balance_below_usd"},
      {kHook + "balance_below_usd = [\"ten\"]", "alerts.balance_below_usd"},
      {kHook + "balance_below_usd = [true]", "alerts.balance_below_usd"},
      {kHook + "balance_below_usd = [10, 10.0]", "alerts.balance_below_usd"},
      {kHook + "key_budget_fractions = [0]", "alerts.key_budget_fractions"},
      {kHook + "key_budget_fractions = [1.5]", "alerts.key_budget_fractions"},
      {kHook + "key_budget_fractions = [0.1234567]", "alerts.key_budget_fractions"},
      {kHook + "key_budget_fractions = [0.5, 0.50]", "alerts.key_budget_fractions"},
      {kHook + "key_budget_fractions = [\"0.5\"]", "alerts.key_budget_fractions"},
      {kHook + "key_budget_fractions = 0.5", "alerts.key_budget_fractions"},
      {kHook + "webhook = \"x\"", "alerts.webhook"},
      {"webhook_url = \"ftp://h.example.com/x\"\nwebhook_secret = \"env::HOOK_SECRET\"",
       "alerts.webhook_url"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(refusal(c.table).first, c.key) << c.table;
  }
}

TEST(AlertsConfigTest, RefusalsNeverRepeatTheUrlOrTheSecret) {
  const auto [key, reason] = refusal(
      "webhook_url = \"http://hooks.example.com/t/SECRET_TOKEN\"\n"
      "webhook_secret = \"env::HOOK_SECRET\"");
  EXPECT_EQ(reason.find("SECRET_TOKEN"), std::string::npos) << reason;
  EXPECT_EQ(refusal("webhook_url = \"https://h.example.com/x\"\n"
                    "webhook_secret = \"whsec_literal_secret\"")
                .second.find("whsec_literal_secret"),
            std::string::npos);
}

TEST(AlertsConfigTest, ChangesWaitForARestart) {
  const auto config = [](const std::string& amounts) {
    return parseConfig("[alerts]\n" + kHook + "balance_below_usd = " + amounts + "\n" + kEcho,
                       "c.toml", env);
  };
  const Config running = config("[10]");
  Config next = config("[20]");
  EXPECT_EQ(keepRestartOnly(next, running), (std::vector<std::string>{"alerts.balance_below_usd"}));
  EXPECT_EQ(next.alerts.balance_below, running.alerts.balance_below);
}

}  // namespace
}  // namespace tollgate::config
