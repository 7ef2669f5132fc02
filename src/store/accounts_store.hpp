// The store's accounts: teams, users, memberships, invitations, API keys and the change sequence
// that authentication follows. SQL only: rules and permissions live in accounts/, key formats in
// auth/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/key_rules.hpp"
#include "store/connection.hpp"

namespace tollgate::store {

struct Team {
  std::string id;
  std::string name;
  std::string state;  ///< "active" or "suspended"
  std::int64_t created_at = 0;
  std::int64_t balance = 0;      ///< pico-USD
  std::int64_t reserved = 0;     ///< pico-USD held by requests in flight
  bool allow_dryrun = true;      ///< The team takes tollgate::dryrun requests.
  key_rules::RateLimits limits;  ///< Its own rate limits; each absent: [limits.team]'s.
};

struct User {
  std::string id;
  std::string email;
  std::string name;
  std::int64_t created_at = 0;
};

struct Member {
  User user;
  std::string role;  ///< "owner", "admin", "member" or "viewer"
  std::int64_t joined_at = 0;
};

struct Invite {
  std::string id;
  std::string team_id;
  std::string team;
  std::string role;
  std::optional<std::string> email;
  std::int64_t created_at = 0;
  std::int64_t expires_at = 0;
  std::optional<std::int64_t> accepted_at;
  std::optional<std::string> accepted_by;  ///< The accepting user's email.
  std::optional<std::int64_t> revoked_at;
  std::optional<std::string> created_by;  ///< The maker's user id; nullopt: the operator.
};

struct ApiKey {
  std::string id;
  std::string public_id;
  std::string secret_hash;  ///< Hex HMAC-SHA256 of the secret under the server secret.
  std::string name;
  std::string team_id;
  std::string team;
  std::optional<std::string> created_by;  ///< The creator's email; none for the operator.
  std::int64_t created_at = 0;
  std::optional<std::int64_t> last_used_at;
  std::optional<std::int64_t> revoked_at;
  key_rules::KeyRules rules;
  /// With a budget, and when listed: what was charged to it in its current window (pico-USD).
  std::optional<std::int64_t> budget_spent;
};

/// What the gateway's in-memory key table holds of one key.
struct KeyGrant {
  std::string public_id;
  std::string secret_hash;
  std::string team_id;
  std::string team;
  bool revoked = false;
  bool team_active = true;
  /// The key's creator is a member whose role may still create keys; true also for the
  /// operator's keys, which have no creator.
  bool creator_may_create = true;
  bool team_allows_dryrun = true;  ///< The team takes tollgate::dryrun requests.
  std::string creator_id;          ///< The creating user's id; empty for the operator's keys.
  key_rules::KeyRules rules;
  key_rules::RateLimits team_limits;  ///< Its team's own rate limits.
};

/// Teams, users, memberships, invitations, keys and the change sequence, in the caller's
/// transaction.
class AccountsStore {
 public:
  explicit AccountsStore(Connection& c) : c_(&c) {}

  // Teams. A team's and a key's name is stored with its UTS #39 skeleton, unique among teams and
  // among a team's active keys (a name kept from before skeletons that looks like an earlier one
  // has none: migrate() lists those).
  Team createTeam(const std::string& name);
  std::vector<Team> listTeams();
  std::optional<Team> findTeam(const std::string& name);
  /// The team whose name looks like `name` (has its skeleton), `name` itself included.
  std::optional<Team> findLookAlikeTeam(const std::string& name);
  std::optional<Team> findTeamById(const std::string& id);
  void setTeamState(const std::string& team_id, const std::string& state);
  void setTeamDryrun(const std::string& team_id, bool allow);

  // Users and memberships.
  User addUser(const std::string& email, const std::string& name);
  std::optional<User> findUser(const std::string& email);
  std::optional<User> findUserById(const std::string& id);
  std::optional<std::string> roleOf(const std::string& team_id, const std::string& user_id);
  /// The teams `user_id` is a member of, by name, each with the role.
  std::vector<std::pair<Team, std::string>> teamsOf(const std::string& user_id);
  void addMember(const std::string& team_id, const std::string& user_id, const std::string& role);
  void setRole(const std::string& team_id, const std::string& user_id, const std::string& role);
  void removeMember(const std::string& team_id, const std::string& user_id);
  std::vector<Member> listMembers(const std::string& team_id);
  std::int64_t countOwners(const std::string& team_id);

  // Invitations.
  Invite createInvite(const std::string& team_id, const std::string& role,
                      const std::optional<std::string>& email, const std::string& token_hash,
                      std::int64_t expires_at, const std::optional<std::string>& created_by);
  std::vector<Invite> listInvites(const std::string& team_id);
  std::optional<Invite> findInviteByHash(const std::string& token_hash);
  std::optional<Invite> findInvite(const std::string& id);
  /// Marks the invitation accepted by `user_id` while it is open (unused, unrevoked, unexpired);
  /// false when it no longer is (another acceptance won).
  bool acceptInvite(const std::string& id, const std::string& user_id);
  /// Holds the team's row until the transaction ends, so that membership changes of one team
  /// run one after the other on every engine (SQLite's write transaction already does).
  void lockTeam(const std::string& team_id);
  void revokeInvite(const std::string& id);

  // API keys.
  ApiKey createKey(const std::string& public_id, const std::string& secret_hash,
                   const std::string& name, const std::string& team_id,
                   const std::optional<std::string>& created_by_user_id,
                   const key_rules::KeyRules& rules);
  std::vector<ApiKey> listKeys(const std::optional<std::string>& team_id);
  std::optional<ApiKey> findKey(const std::string& public_id);
  void revokeKey(const std::string& id);
  void setKeyRules(const std::string& id, const key_rules::KeyRules& rules);
  /// Sets a team's own rate limits (each absent: the configured default).
  void setTeamLimits(const std::string& team_id, const key_rules::RateLimits& limits);
  key_rules::RateLimits teamLimits(const std::string& team_id);
  /// Every key with what authentication needs to know of its team and creator; `key_roles` are
  /// the roles that may create keys (the permission table's, given by the caller).
  std::vector<KeyGrant> loadGrants(const std::vector<std::string>& key_roles);
  /// Records when keys were last used (only moving the time forward).
  void touchKeys(const std::vector<std::pair<std::string, std::int64_t>>& public_id_at);

  // The change sequence: every write that authentication must see moves it, in its transaction.
  std::int64_t bumpChange();
  std::int64_t changeSeq();
  /// The change sequence, read so that no change commits before the current transaction ends
  /// (PostgreSQL: a share lock on its row; SQLite's write transaction already excludes every
  /// other writer). A heartbeat reads it so: a change commits before it or is seen by it.
  std::int64_t lockedChangeSeq();

 private:
  Connection* c_;
};

}  // namespace tollgate::store
