#include "accounts/permissions.hpp"

#include <gtest/gtest.h>

namespace tollgate::accounts {
namespace {

TEST(Permissions, FollowTheTable) {
  // create keys: owner, admin, member; revoke any key, invite, change roles: owner, admin.
  for (const Role r : {Role::Owner, Role::Admin, Role::Member}) {
    EXPECT_TRUE(allowed(r, Action::CreateKey));
  }
  EXPECT_FALSE(allowed(Role::Viewer, Action::CreateKey));
  for (const Action a : {Action::RevokeAnyKey, Action::Invite, Action::ChangeRoles}) {
    EXPECT_TRUE(allowed(Role::Owner, a));
    EXPECT_TRUE(allowed(Role::Admin, a));
    EXPECT_FALSE(allowed(Role::Member, a));
    EXPECT_FALSE(allowed(Role::Viewer, a));
  }
  EXPECT_TRUE(allowed(Role::Owner, Action::ManageOwners));
  EXPECT_FALSE(allowed(Role::Admin, Action::ManageOwners));
  for (const Role r : {Role::Owner, Role::Admin, Role::Member, Role::Viewer}) {
    EXPECT_TRUE(allowed(r, Action::ViewTeam));
  }
}

TEST(Permissions, RolesParseByExactName) {
  EXPECT_EQ(parseRole("owner"), Role::Owner);
  EXPECT_EQ(parseRole("viewer"), Role::Viewer);
  EXPECT_EQ(parseRole("Owner"), std::nullopt);
  EXPECT_EQ(parseRole("root"), std::nullopt);
  EXPECT_EQ(roleName(Role::Admin), "admin");
}

}  // namespace
}  // namespace tollgate::accounts
