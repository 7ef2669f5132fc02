// Teams, people, invitations and API keys as operations with their rules: names checked, the
// permission table applied to the acting user (the operator may do everything), the last owner
// kept, secrets generated and only their keyed hashes stored. A change that authentication must
// see moves the store's change sequence, and the operation then waits until every live gateway
// on the store has applied it (bounded; the laggards are reported).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "accounts/permissions.hpp"
#include "store/store.hpp"

namespace tollgate::accounts {

/// A mistake of the caller's (unknown team, duplicate name, bad role, expired invitation…): one
/// line that says what is wrong.
class UserError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Who acts: the operator (no email), or a team member by email.
struct Actor {
  std::optional<std::string> email;
};

/// Gateways that had not applied a change when the wait for them ended.
struct Propagation {
  std::int64_t seq = 0;
  std::vector<store::GatewayRecord> lagging;
};

struct CreatedKey {
  store::ApiKey key;
  std::string full;  ///< The whole key, to show once.
  Propagation propagation;
};

struct CreatedInvite {
  store::Invite invite;
  std::string token;  ///< To show once.
};

/// How long a change may take to reach every live gateway, and what "live" means.
struct PropagationPolicy {
  std::chrono::milliseconds wait{5'000};
  std::chrono::milliseconds alive_window{3'000};  ///< Gateways heartbeat every 500 ms.
};

class Accounts {
 public:
  Accounts(store::Store& s, std::string server_secret, PropagationPolicy policy = {});

  store::Team createTeam(const Actor& actor, const std::string& name);
  std::vector<store::Team> listTeams(const Actor& actor);
  store::Team showTeam(const Actor& actor, const std::string& name);
  Propagation setTeamActive(const Actor& actor, const std::string& name, bool active);
  /// Whether the team's keys may send tollgate::dryrun requests (an owner's decision).
  Propagation setTeamDryrun(const Actor& actor, const std::string& name, bool allow);

  store::User addUser(const std::string& email, const std::string& display_name);
  Propagation addMember(const Actor& actor, const std::string& team, const std::string& email,
                        const std::string& role);
  Propagation setRole(const Actor& actor, const std::string& team, const std::string& email,
                      const std::string& role);
  Propagation removeMember(const Actor& actor, const std::string& team, const std::string& email);
  std::vector<store::Member> listMembers(const Actor& actor, const std::string& team);

  CreatedInvite createInvite(const Actor& actor, const std::string& team, const std::string& role,
                             const std::optional<std::string>& email,
                             std::chrono::milliseconds valid_for);
  std::vector<store::Invite> listInvites(const Actor& actor, const std::string& team);
  /// Joins the invited team as `email` (a new user is created if needed).
  Propagation acceptInvite(const std::string& token, const std::string& email);
  void revokeInvite(const Actor& actor, const std::string& id);

  CreatedKey createKey(const Actor& actor, const std::string& team, const std::string& name,
                       const std::optional<std::string>& user_email);
  std::vector<store::ApiKey> listKeys(const Actor& actor, const std::optional<std::string>& team);
  /// `which` is a public id or a whole key.
  Propagation revokeKey(const Actor& actor, const std::string& which);

  /// Makes team `default` with one key when the store has no team yet; nullopt otherwise.
  std::optional<CreatedKey> bootstrap();

 private:
  struct Membership {
    store::Team team;
    store::User user;
    std::string role;
  };

  store::Team requireTeam(const std::string& name);
  /// The member `email` of `team`; throws UserError when either is unknown or not a member.
  Membership requireMember(const std::string& team, const std::string& email);
  store::User requireUser(const std::string& email);
  /// Throws UserError unless the actor may do `action` in `team`.
  void authorize(const Actor& actor, const store::Team& team, Action action);
  Propagation awaitGateways(std::int64_t seq);

  store::Store& store_;
  std::string server_secret_;
  PropagationPolicy policy_;
};

/// Checks a team or key name: 1 to 100 characters of UTF-8, no control characters, not blank.
void checkName(std::string_view what, const std::string& name);
/// Normalises an email address (lower case) and checks its shape.
std::string checkEmail(const std::string& email);

}  // namespace tollgate::accounts
