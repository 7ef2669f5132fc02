#include "accounts/records_json.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tollgate::accounts
