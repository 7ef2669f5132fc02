#include "accounts/permissions.hpp"

#include <array>

namespace tollgate::accounts {
namespace {

struct Grant {
  Action action;
  bool owner, admin, member, viewer;
};

// Rows follow Action's order (checked below).
constexpr std::array kTable{
    //    action                owner  admin  member viewer
    Grant{Action::ViewTeam, true, true, true, true},
    Grant{Action::CreateKey, true, true, true, false},
    Grant{Action::RevokeAnyKey, true, true, false, false},
    Grant{Action::Invite, true, true, false, false},
    Grant{Action::ChangeRoles, true, true, false, false},
    Grant{Action::ManageOwners, true, false, false, false},
    Grant{Action::SuspendTeam, true, false, false, false},
    Grant{Action::ReadSpend, true, true, true, true},
    Grant{Action::ReadAudit, true, true, false, false},
    Grant{Action::UsePlayground, true, true, true, false},
};
constexpr std::array<std::string_view, kTable.size()> kActionNames{
    "view_team",     "create_key",   "revoke_any_key", "invite",     "change_roles",
    "manage_owners", "suspend_team", "read_spend",     "read_audit", "use_playground"};

constexpr bool tableFollowsEnum() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].action) != i) {
      return false;
    }
  }
  return true;
}
static_assert(tableFollowsEnum(), "kTable rows must follow Action's order");
static_assert(kTable.size() == static_cast<std::size_t>(Action::UsePlayground) + 1);
static_assert(kTable.size() == std::size(kActions));

constexpr std::array<std::string_view, 4> kRoleNames{"owner", "admin", "member", "viewer"};

}  // namespace

bool allowed(Role role, Action action) {
  const Grant& g = kTable[static_cast<std::size_t>(action)];
  switch (role) {
    case Role::Owner:
      return g.owner;
    case Role::Admin:
      return g.admin;
    case Role::Member:
      return g.member;
    case Role::Viewer:
      return g.viewer;
  }
  return false;
}

std::vector<std::string> rolesAllowed(Action action) {
  std::vector<std::string> names;
  for (const Role r : {Role::Owner, Role::Admin, Role::Member, Role::Viewer}) {
    if (allowed(r, action)) {
      names.emplace_back(roleName(r));
    }
  }
  return names;
}

bool lowers(Role from, Role to) {
  // Role lists the roles from the highest down.
  return static_cast<int>(to) > static_cast<int>(from);
}

std::optional<Role> parseRole(std::string_view text) {
  for (std::size_t i = 0; i < kRoleNames.size(); ++i) {
    if (kRoleNames[i] == text) {
      return static_cast<Role>(i);
    }
  }
  return std::nullopt;
}

std::string_view actionName(Action action) {
  return kActionNames[static_cast<std::size_t>(action)];
}

std::string_view roleName(Role role) { return kRoleNames[static_cast<std::size_t>(role)]; }

}  // namespace tollgate::accounts
