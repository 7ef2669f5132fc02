#include "openai/models.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace tollgate::openai {
namespace {

config::Config catalogue() {
  return config::parseConfig(R"(
[models.plain]
routing = ["l"]
[models.plain.providers.l]
type = "dummy"
[models.secure]
security = ["tee"]
display_name = "Secure"
model_info = { tier = "gold" }
routing = ["l"]
[models.secure.providers.l]
type = "dummy"
[models.private]
security = ["zdr"]
routing = ["l"]
[models.private.providers.l]
type = "dummy"
)",
                             "t.toml");
}

std::vector<std::string> ids(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  EXPECT_STREQ(doc["object"].GetString(), "list");
  std::vector<std::string> out;
  for (const auto& m : doc["data"].GetArray()) {
    out.emplace_back(m["id"].GetString());
  }
  return out;
}

TEST(ListModels, FiltersByAllowFlagsInAnyCase) {
  const auto c = catalogue();
  using V = std::vector<std::string>;
  EXPECT_EQ(ids(*listModels(c, "")), (V{"plain", "private", "secure"}));
  EXPECT_EQ(ids(*listModels(c, "allow_tee=false")), (V{"plain", "private"}));
  EXPECT_EQ(ids(*listModels(c, "allow_zdr=FALSE")), (V{"plain", "secure"}));
  EXPECT_EQ(ids(*listModels(c, "allow_tee=False&allow_zdr=false")), (V{"plain"}));
  EXPECT_EQ(ids(*listModels(c, "allow_tee=TRUE&other=1")), (V{"plain", "private", "secure"}));
}

TEST(ListModels, AKeysAllowedModelsOnly) {
  const auto c = catalogue();
  using V = std::vector<std::string>;
  const V allowed{"tollgate::model_name::secure", "plain", "tollgate::function_name::f"};
  EXPECT_EQ(ids(*listModels(c, "", &allowed)), (V{"plain", "secure"}));
  EXPECT_EQ(ids(*listModels(c, "allow_tee=false", &allowed)), (V{"plain"}));
  EXPECT_TRUE(retrieveModel(c, "plain", &allowed).ok());
  const auto other = retrieveModel(c, "private", &allowed);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.error().status(), 404);
  EXPECT_TRUE(retrieveModel(c, "private").ok());
}

TEST(ListModels, RejectsOtherValues) {
  const auto c = catalogue();
  for (std::string_view q : {"allow_tee=yes", "allow_tee=", "allow_tee", "allow_zdr=1"}) {
    const auto r = listModels(c, q);
    ASSERT_FALSE(r.ok()) << q;
    EXPECT_EQ(r.error().status(), 400);
    EXPECT_EQ(r.error().param, q.substr(0, 9));
  }
}

TEST(ListModels, ItemsCarryEverySpecField) {
  rapidjson::Document doc;
  doc.Parse(listModels(catalogue(), "")->c_str());
  const auto& m = doc["data"][2];
  for (const char* f : {"id", "object", "created", "owned_by", "is_active", "input_cost_per_token",
                        "output_cost_per_token", "max_input_tokens", "max_output_tokens",
                        "input_modalities", "output_modalities", "display_name", "model_info"}) {
    EXPECT_TRUE(m.HasMember(f)) << f;
  }
  EXPECT_STREQ(m["object"].GetString(), "model");
  EXPECT_STREQ(m["display_name"].GetString(), "Secure");
  EXPECT_STREQ(m["model_info"]["tier"].GetString(), "gold");
  EXPECT_TRUE(m["input_cost_per_token"].IsNumber());
}

}  // namespace
}  // namespace tollgate::openai
