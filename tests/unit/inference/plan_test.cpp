#include "inference/plan.hpp"

#include <gtest/gtest.h>

namespace tollgate::inference {
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

std::string resolvedId(const config::Config& c, std::string_view name) {
  const auto p = plan(c, name);
  EXPECT_TRUE(p.ok()) << name;
  EXPECT_EQ(p->providers.size(), 1U);
  return p ? p->model->id : "";
}

TEST(Plan, PlainAndPrefixedIds) {
  const auto c = catalogue();
  EXPECT_EQ(resolvedId(c, "gpt_4o_mini"), "gpt_4o_mini");
  EXPECT_EQ(resolvedId(c, "tollgate::model_name::gpt_4o_mini"), "gpt_4o_mini");
}

TEST(Plan, UnknownNamesAreModelNotFound) {
  const auto c = catalogue();
  for (std::string_view name :
       {"gpt-4o-mini", "openai/gpt_4o_mini", "GPT_4O_MINI", "nope", "tollgate::model_name::nope",
        "tollgate::function_name::support_bot", "tollgate::model_name::", "retired"}) {
    const auto r = plan(c, name);
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.error().kind, ErrorKind::ModelNotFound) << name;
    EXPECT_EQ(r.error().status(), 404);
    EXPECT_EQ(r.error().param, "model");
  }
}

}  // namespace
}  // namespace tollgate::inference
