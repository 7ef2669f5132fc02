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
  EXPECT_EQ(p->routes.size(), 1U);
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

namespace tollgate::inference {
namespace {

config::Config withFunction() {
  return config::parseConfig(R"(
[models.m1]
retries = { num_retries = 2 }
routing = ["l"]
[models.m1.providers.l]
type = "dummy"
[models.m2]
routing = ["l"]
[models.m2.providers.l]
type = "dummy"
[models.off]
is_active = false
routing = ["l"]
[models.off.providers.l]
type = "dummy"
[functions.f]
fallback_variants = ["c"]
[functions.f.variants.a]
model = "m1"
weight = 1
[functions.f.variants.b]
model = "off"
weight = 1
[functions.f.variants.c]
model = "m2"
retries = { num_retries = 4 }
[functions.g.variants.x]
model = "m2"
weight = 1
)",
                             "t.toml");
}

TEST(Plan, AFunctionsVariantsWithActiveModelsThenItsFallbacks) {
  const auto c = withFunction();
  const auto p = plan(c, "tollgate::function_name::f", "episode-1");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->routes.size(), 2U);  // b's model is inactive.
  EXPECT_EQ(p->routes[0].variant->name, "a");
  EXPECT_EQ(p->routes[0].retries.num_retries, 2);  // The model's.
  EXPECT_EQ(p->routes[1].variant->name, "c");
  EXPECT_EQ(p->routes[1].retries.num_retries, 4);  // The variant's own.
  EXPECT_EQ(p->model->id, "m1");
  EXPECT_EQ(p->function->name, "f");
}

TEST(Plan, APinnedVariantIsTheOnlyRoute) {
  const auto c = withFunction();
  const auto p = plan(c, "tollgate::function_name::f", "e", "c");
  ASSERT_TRUE(p.ok());
  ASSERT_EQ(p->routes.size(), 1U);
  EXPECT_EQ(p->routes[0].variant->name, "c");
}

TEST(Plan, UnknownVariantsAndPinsOutsideFunctionsAreVariantNotFound) {
  const auto c = withFunction();
  for (const auto& [model, variant] :
       {std::pair{"tollgate::function_name::f", "zzz"},
        std::pair{"tollgate::function_name::f", "x"}, std::pair{"m1", "a"},
        std::pair{"tollgate::model_name::m1", "a"}}) {
    const auto r = plan(c, model, "e", variant);
    ASSERT_FALSE(r.ok()) << model << " " << variant;
    EXPECT_EQ(r.error().kind, ErrorKind::VariantNotFound);
    EXPECT_EQ(r.error().status(), 404);
    EXPECT_EQ(r.error().param, "tollgate::variant_name");
  }
  const auto unknown = plan(c, "tollgate::function_name::nope", "e");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().kind, ErrorKind::ModelNotFound);
}

}  // namespace
}  // namespace tollgate::inference
