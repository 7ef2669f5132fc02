#include "config/limits_config.hpp"

#include <gtest/gtest.h>

namespace tollgate::config {
namespace {

const std::string kEcho =
    "[models.echo]\nrouting=[\"l\"]\n[models.echo.providers.l]\ntype=\"dummy\"\n";

Config parse(const std::string& tables, const std::string& model_tables = "") {
  return parseConfig(tables + "\n" + kEcho + model_tables, "c.toml");
}

/// The refusal of `tables`: its key and reason.
std::pair<std::string, std::string> refusal(const std::string& tables,
                                            const std::string& model_tables = "") {
  try {
    parse(tables, model_tables);
  } catch (const ConfigError& e) {
    return {e.key(), e.reason()};
  }
  ADD_FAILURE() << "accepted: " << tables << model_tables;
  return {};
}

TEST(LimitsConfigTest, NothingIsLimitedUnlessConfigured) {
  const Config c = parse("");
  EXPECT_FALSE(c.limits.key.any());
  EXPECT_FALSE(c.limits.team.any());
  EXPECT_FALSE(c.models.front().limits.any());
}

TEST(LimitsConfigTest, KeysTeamsAndModelsHaveTheirOwn) {
  const Config c = parse(
      "[limits.key]\nrpm = 600\ntpm = 200000\nconcurrent = 20\n"
      "[limits.team]\nrpm = 6000\n",
      "[models.echo.limits]\nrpm = 10000\ntpm = 2000000\n");
  EXPECT_EQ(c.limits.key.rpm, 600);
  EXPECT_EQ(c.limits.key.tpm, 200000);
  EXPECT_EQ(c.limits.key.concurrent, 20);
  EXPECT_EQ(c.limits.team.rpm, 6000);
  EXPECT_FALSE(c.limits.team.tpm);
  EXPECT_EQ(c.models.front().limits.rpm, 10000);
  EXPECT_EQ(c.models.front().limits.tpm, 2000000);
}

TEST(LimitsConfigTest, ValuesArePositiveBoundedAndKnown) {
  EXPECT_EQ(refusal("[limits.key]\nrpm = 0\n").first, "limits.key.rpm");
  EXPECT_EQ(refusal("[limits.team]\ntpm = -5\n").first, "limits.team.tpm");
  EXPECT_EQ(refusal("[limits.key]\nrpm = 1000000000001\n").first, "limits.key.rpm");
  EXPECT_EQ(refusal("[limits.key]\nrpm = \"600\"\n").first, "limits.key.rpm");
  EXPECT_EQ(refusal("[limits.key]\nrps = 5\n").first, "limits.key.rps");
  EXPECT_EQ(refusal("[limits.user]\nrpm = 5\n").first, "limits.user");
  // A model's requests in flight are not the fleet's to count.
  EXPECT_EQ(refusal("", "[models.echo.limits]\nconcurrent = 5\n").first,
            "models.echo.limits.concurrent");
}

}  // namespace
}  // namespace tollgate::config
