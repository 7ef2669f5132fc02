// The store: teams, users, memberships, invitations, API keys, the change sequence and the
// registry of running gateways, over one Connection (SQLite or PostgreSQL). It holds the SQL and
// nothing else: rules and permissions live in accounts/, key formats in auth/. Every method
// blocks its thread; the gateway calls it only from threads of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "store/connection.hpp"

namespace tollgate::store {

/// Milliseconds since the Unix epoch, the unit of every time in the store.
std::int64_t nowMs();

struct Team {
  std::string id;
  std::string name;
  std::string state;  ///< "active" or "suspended"
  std::int64_t created_at = 0;
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
};

/// What the gateway's in-memory key table holds of one key.
struct KeyGrant {
  std::string public_id;
  std::string secret_hash;
  std::string team_id;
  std::string team;
  bool revoked = false;
  bool team_active = true;
  bool creator_is_member = true;  ///< True also for keys made by the operator.
};

/// A running gateway, as it registered itself.
struct GatewayRecord {
  std::string id;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t seen_at = 0;
  std::int64_t applied_seq = 0;
};

class Store {
 public:
  explicit Store(std::unique_ptr<Connection> c) : c_(std::move(c)) {}
  Connection& connection() { return *c_; }

  // Teams.
  Team createTeam(const std::string& name);
  std::vector<Team> listTeams();
  std::optional<Team> findTeam(const std::string& name);
  void setTeamState(const std::string& team_id, const std::string& state);

  // Users and memberships.
  User addUser(const std::string& email, const std::string& name);
  std::optional<User> findUser(const std::string& email);
  std::optional<std::string> roleOf(const std::string& team_id, const std::string& user_id);
  void addMember(const std::string& team_id, const std::string& user_id, const std::string& role);
  void setRole(const std::string& team_id, const std::string& user_id, const std::string& role);
  void removeMember(const std::string& team_id, const std::string& user_id);
  std::vector<Member> listMembers(const std::string& team_id);
  std::int64_t countOwners(const std::string& team_id);

  // Invitations.
  Invite createInvite(const std::string& team_id, const std::string& role,
                      const std::optional<std::string>& email, const std::string& token_hash,
                      std::int64_t expires_at);
  std::vector<Invite> listInvites(const std::string& team_id);
  std::optional<Invite> findInviteByHash(const std::string& token_hash);
  std::optional<Invite> findInvite(const std::string& id);
  void acceptInvite(const std::string& id, const std::string& user_id);
  void revokeInvite(const std::string& id);

  // API keys.
  ApiKey createKey(const std::string& public_id, const std::string& secret_hash,
                   const std::string& name, const std::string& team_id,
                   const std::optional<std::string>& created_by_user_id);
  std::vector<ApiKey> listKeys(const std::optional<std::string>& team_id);
  std::optional<ApiKey> findKey(const std::string& public_id);
  void revokeKey(const std::string& id);
  /// Every key with what authentication needs to know of its team and creator.
  std::vector<KeyGrant> loadGrants();
  /// Records when keys were last used (only moving the time forward).
  void touchKeys(const std::vector<std::pair<std::string, std::int64_t>>& public_id_at);

  // The change sequence: every write that authentication must see moves it, in its transaction.
  std::int64_t bumpChange();
  std::int64_t changeSeq();

  // Running gateways.
  /// Registers a gateway; its times are the store's clock, not the record's.
  void registerGateway(const GatewayRecord& g);
  void heartbeat(const std::string& id, std::int64_t applied_seq);
  void unregisterGateway(const std::string& id);
  /// Gateways seen in the last `alive_window_ms` (by the store's clock) that have not applied
  /// change `seq`.
  std::vector<GatewayRecord> laggingGateways(std::int64_t seq, std::int64_t alive_window_ms);
  void forgetGatewaysUnseenFor(std::int64_t ms);

 private:
  std::unique_ptr<Connection> c_;
};

}  // namespace tollgate::store
