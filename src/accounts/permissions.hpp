// The one table of who may do what in a team. `tollgate admin` acts as the operator, who may do
// everything; the console calls the same operations with a signed-in user, and this table
// decides.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate::accounts {

enum class Role { Owner, Admin, Member, Viewer };

enum class Action {
  ViewTeam,       ///< See the team, its members, keys (never secrets) and invitations.
  CreateKey,      ///< Create an API key for the team.
  RevokeAnyKey,   ///< Revoke any key of the team (a creator may always revoke their own).
  Invite,         ///< Create, list and revoke invitations.
  ChangeRoles,    ///< Add members, change roles, remove members.
  ManageOwners,   ///< Make someone an owner, or change or remove an owner.
  SuspendTeam,    ///< Suspend or resume the team.
  ReadSpend,      ///< See the team's balance, usage and spend log.
  ReadAudit,      ///< Read the team's audit log.
  UsePlayground,  ///< Run inference in the console's playground, billed to the team.
};

/// Every action, in order.
inline constexpr Action kActions[] = {
    Action::ViewTeam,    Action::CreateKey,    Action::RevokeAnyKey, Action::Invite,
    Action::ChangeRoles, Action::ManageOwners, Action::SuspendTeam,  Action::ReadSpend,
    Action::ReadAudit,   Action::UsePlayground};

/// The action's name as the console API shows it ("create_key", …).
std::string_view actionName(Action action);

/// True when `role` may do `action`.
bool allowed(Role role, Action action);

/// The names of the roles that may do `action`.
std::vector<std::string> rolesAllowed(Action action);

/// True when `to` is a lower role than `from` (owner, admin, member, viewer, from the highest):
/// a change that only takes access away, which a suspended team still allows.
bool lowers(Role from, Role to);

std::optional<Role> parseRole(std::string_view text);
std::string_view roleName(Role role);

}  // namespace tollgate::accounts
