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

TEST(Permissions, ALowerRoleIsOneThatMayDoLess) {
  EXPECT_TRUE(lowers(Role::Owner, Role::Admin));
  EXPECT_TRUE(lowers(Role::Admin, Role::Viewer));
  EXPECT_TRUE(lowers(Role::Member, Role::Viewer));
  EXPECT_FALSE(lowers(Role::Viewer, Role::Member));
  EXPECT_FALSE(lowers(Role::Admin, Role::Owner));
  for (const Role r : {Role::Owner, Role::Admin, Role::Member, Role::Viewer}) {
    EXPECT_FALSE(lowers(r, r));
  }
  // What a lower role may do, the higher one may too.
  for (const Action a : kActions) {
    EXPECT_TRUE(!allowed(Role::Viewer, a) || allowed(Role::Member, a));
    EXPECT_TRUE(!allowed(Role::Member, a) || allowed(Role::Admin, a));
    EXPECT_TRUE(!allowed(Role::Admin, a) || allowed(Role::Owner, a));
  }
}

}  // namespace
}  // namespace tollgate::accounts
