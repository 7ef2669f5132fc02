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

TEST(ConsoleConfigTest, TeamsPerUserDefaultsToThreeAndZeroLeavesItToTheOperator) {
  EXPECT_EQ(console("").max_teams_per_user, 3);
  EXPECT_EQ(console("max_teams_per_user = 0").max_teams_per_user, 0);
  EXPECT_EQ(console("max_teams_per_user = 50").max_teams_per_user, 50);
  EXPECT_EQ(refusal("max_teams_per_user = -1").first, "console.max_teams_per_user");
}

}  // namespace
}  // namespace tollgate::config
