#include "config/key_models.hpp"

#include <gtest/gtest.h>

namespace tollgate::config {
namespace {

Config twoModelsAndAFunction() {
  return parseConfig(R"(
[models.chat]
routing = ["l"]
[models.chat.providers.l]
type = "dummy"
[models.embed]
routing = ["l"]
[models.embed.providers.l]
type = "dummy"
[functions.triage.variants.v]
model = "chat"
weight = 1
)",
                     "k.toml");
}

TEST(UnknownAllowedModel, ConfiguredModelsInEveryFormAndFunctionsByTheirName) {
  const Config c = twoModelsAndAFunction();
  using V = std::vector<std::string>;
  EXPECT_FALSE(unknownAllowedModel(
      c, V{"chat", "tollgate::model_name::chat", "tollgate::embedding_model_name::embed",
           "tollgate::function_name::triage"}));
  EXPECT_EQ(unknownAllowedModel(c, V{"chat", "nope"}), "nope");
  EXPECT_EQ(unknownAllowedModel(c, V{"triage"}), "triage");
  EXPECT_EQ(unknownAllowedModel(c, V{"tollgate::function_name::chat"}),
            "tollgate::function_name::chat");
  EXPECT_EQ(unknownAllowedModel(c, V{"tollgate::model_name::triage"}),
            "tollgate::model_name::triage");
}

}  // namespace
}  // namespace tollgate::config
