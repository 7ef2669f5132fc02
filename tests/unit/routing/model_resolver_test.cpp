#include "routing/model_resolver.hpp"

#include <gtest/gtest.h>

namespace tollgate::routing {
namespace {

config::Config catalogue() {
  return config::parseConfig(R"(
[models.gpt_4o_mini]
routing = ["l"]
[models.gpt_4o_mini.providers.l]
type = "dummy"
[models.retired]
is_active = false
routing = ["l"]
[models.retired.providers.l]
type = "dummy"
)",
                             "t.toml");
}

TEST(ResolveModel, PlainAndPrefixedIds) {
  const auto c = catalogue();
  EXPECT_EQ((*resolveModel(c, "gpt_4o_mini"))->id, "gpt_4o_mini");
  EXPECT_EQ((*resolveModel(c, "tollgate::model_name::gpt_4o_mini"))->id, "gpt_4o_mini");
}

TEST(ResolveModel, UnknownNamesAreModelNotFound) {
  const auto c = catalogue();
  for (std::string_view name :
       {"gpt-4o-mini", "openai/gpt_4o_mini", "GPT_4O_MINI", "nope", "tollgate::model_name::nope",
        "tollgate::function_name::support_bot", "tollgate::model_name::", "retired"}) {
    const auto r = resolveModel(c, name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error().kind, ErrorKind::ModelNotFound) << name;
    EXPECT_EQ(r.error().status(), 404);
    EXPECT_EQ(r.error().param, "model");
  }
}

}  // namespace
}  // namespace tollgate::routing
