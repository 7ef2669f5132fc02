#include "accounts/records_json.hpp"

#include <gtest/gtest.h>

#include "core/json.hpp"

namespace tollgate::accounts {
namespace {

store::Member memberAs(std::string email, std::string role) {
  store::Member m;
  m.user.id = "u-" + email;
  m.user.email = std::move(email);
  m.role = std::move(role);
  return m;
}

store::ApiKey keyBy(std::optional<std::string> creator) {
  store::ApiKey k;
  k.public_id = "pub";
  k.created_by = std::move(creator);
  return k;
}

TEST(KeyInactiveReason, AKeyWorksWhileItsCreatorMayCreateKeys) {
  const std::vector<store::Member> team{memberAs("ann@x.org", "member"),
                                        memberAs("bob@x.org", "viewer")};
  EXPECT_EQ(keyInactiveReason(keyBy("ann@x.org"), team), std::nullopt);
  EXPECT_EQ(keyInactiveReason(keyBy("bob@x.org"), team), "creator_role");
  EXPECT_EQ(keyInactiveReason(keyBy("cy@x.org"), team), "creator_not_member");
  EXPECT_EQ(keyInactiveReason(keyBy("cy@x.org"), {}), "creator_not_member");
}

TEST(KeyInactiveReason, TheOperatorsKeysAlwaysWork) {
  EXPECT_EQ(keyInactiveReason(keyBy(std::nullopt), {}), std::nullopt);
}

TEST(KeyInactiveReason, ARevokedKeyIsRevokedNotInactive) {
  store::ApiKey k = keyBy("cy@x.org");
  k.revoked_at = 1;
  EXPECT_EQ(keyInactiveReason(k, {}), std::nullopt);
}

const store::TokenKinds kKinds{.cached_tokens = 800,
                               .cache_write_tokens = 100,
                               .cache_write_1h_tokens = 60,
                               .audio_prompt_tokens = 20,
                               .reasoning_tokens = 30,
                               .audio_completion_tokens = 4};

/// `doc` parsed from what `write` wrote.
template <typename Write>
rapidjson::Document written(Write write) {
  json::Writer w;
  write(w);
  rapidjson::Document doc;
  doc.Parse(w.take().c_str());
  return doc;
}

TEST(SpendJson, ARowCarriesEachKindAfterTheMembersItHadBefore) {
  store::SpendRow row;
  row.prompt_tokens = 1000;
  row.completion_tokens = 40;
  row.kinds = kKinds;
  const auto doc = written([&](json::Writer& w) { writeSpendRow(w, row); });
  ASSERT_TRUE(doc.IsObject());
  std::vector<std::string> names;
  for (const auto& m : doc.GetObject()) {
    names.emplace_back(m.name.GetString());
  }
  const std::vector<std::string> last(names.end() - 7, names.end());
  EXPECT_EQ(last, (std::vector<std::string>{"uncollected", "cached_tokens", "cache_write_tokens",
                                            "cache_write_1h_tokens", "audio_prompt_tokens",
                                            "reasoning_tokens", "audio_completion_tokens"}));
  EXPECT_EQ(doc["cached_tokens"].GetInt64(), 800);
  EXPECT_EQ(doc["cache_write_1h_tokens"].GetInt64(), 60);
  EXPECT_EQ(doc["reasoning_tokens"].GetInt64(), 30);
  EXPECT_EQ(doc["audio_completion_tokens"].GetInt64(), 4);
}

TEST(SpendJson, AGroupCarriesItsKindsAndItsUncachedInput) {
  const store::SpendTotal t{"m", 2, 1000, 40, 5, kKinds};
  const auto doc = written([&](json::Writer& w) { writeSpendTotal(w, "model", t); });
  EXPECT_EQ(doc["model"].GetString(), std::string("m"));
  EXPECT_EQ(doc["cached_tokens"].GetInt64(), 800);
  EXPECT_EQ(doc["cache_write_tokens"].GetInt64(), 100);
  EXPECT_EQ(doc["uncached_prompt_tokens"].GetInt64(), 100) << "1000 - 800 read - 100 written";
  EXPECT_EQ(uncachedPrompt(10, kKinds), 0) << "never below 0";
}

TEST(SpendCsv, TheKindsAreTheLastColumnsAfterKeyName) {
  store::SpendRow row;
  row.key_name = "nightly";
  row.kinds = kKinds;
  const std::string csv = spendCsv({row});
  const std::size_t eol = csv.find('\n');
  EXPECT_TRUE(csv.substr(0, eol).ends_with(
      ",key_name,cached_tokens,cache_write_tokens,cache_write_1h_tokens,audio_prompt_tokens,"
      "reasoning_tokens,audio_completion_tokens"))
      << csv;
  EXPECT_TRUE(csv.ends_with(",\"nightly\",800,100,60,20,30,4\n")) << csv;
}

}  // namespace
}  // namespace tollgate::accounts
