// Teams, people, invitations and API keys as operations with their rules: names checked, the
// permission table applied to the acting user (the operator may do everything), the last owner
// kept, balances added to within their limit, secrets generated and only their keyed hashes
// stored. Every operation answers an Outcome: its value, or a Refusal that says why not; a store
// that fails throws store::StoreError. A change that authentication must see moves the store's
// change sequence, and the operation then waits until every live gateway on the store has
// applied it (bounded; the laggards are reported). Every call blocks its thread on the store:
// AccountService runs them for callers on an event loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "accounts/permissions.hpp"
#include "accounts/refusal.hpp"
#include "core/money.hpp"
#include "store/store.hpp"

namespace tollgate::accounts {

/// Who acts: the operator (no email), or a team member by email; `source` is where from, as the
/// audit log records it (the client's address; empty: the command line, "cli").
struct Actor {
  std::optional<std::string> email;
  std::string source;
};

/// How long a console session lasts: idle, and at most.
struct SessionPolicy {
  std::chrono::milliseconds idle{12LL * 3600 * 1000};
  std::chrono::milliseconds lifetime{7LL * 24 * 3600 * 1000};
};

/// A change, and the gateways that had not applied it when the wait for them ended: each of
/// them was fenced (silent past its lease), so it serves nothing until it has applied it.
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

/// What an invitation offers, shown before it is accepted.
struct InvitePreview {
  std::string team;
  std::string role;
  std::string invited_by;  ///< The maker's email, or "operator".
};

/// A team with what `teams show` counts of it.
struct TeamSummary {
  store::Team team;
  std::int64_t members = 0;
  std::int64_t active_keys = 0;
};

/// How a change waits for the gateways: until each has applied it or the store's clock shows no
/// heartbeat from it for its lease plus `margin` (so its lease has run out first: it is fenced),
/// asking the store every `poll`. `wait` only bounds a store whose clock stalls: every lease is
/// at most 8 s, so a gateway that neither applies a change nor falls silent cannot outlast it.
struct PropagationPolicy {
  std::chrono::milliseconds wait{30'000};
  std::chrono::milliseconds margin{1'000};
  std::chrono::milliseconds poll{20};
};

/// Whether the wait for `p`'s lagging gateways is over: every one of them is silent past its
/// lease and the margin.
bool allFenced(const Propagation& p, const PropagationPolicy& policy);

/// A change to a key's rules: each rule absent is left as it is; present, it is set (to nullopt:
/// cleared).
struct RateLimitsChange {
  std::optional<std::optional<std::int64_t>> rpm;
  std::optional<std::optional<std::int64_t>> tpm;
  std::optional<std::optional<std::int64_t>> concurrent;

  bool empty() const { return !rpm && !tpm && !concurrent; }
  /// `limits` with this change made.
  key_rules::RateLimits applied(key_rules::RateLimits limits) const {
    limits.rpm = rpm.value_or(limits.rpm);
    limits.tpm = tpm.value_or(limits.tpm);
    limits.concurrent = concurrent.value_or(limits.concurrent);
    return limits;
  }
};

struct KeyRulesChange {
  std::optional<std::optional<std::int64_t>> expires_at;
  std::optional<std::optional<std::vector<std::string>>> allowed_models;
  RateLimitsChange limits;
  std::optional<std::optional<key_rules::Budget>> budget;

  bool empty() const { return !expires_at && !allowed_models && limits.empty() && !budget; }
  /// The rules of a new key: each rule given, the rest absent.
  key_rules::KeyRules rules() const {
    return {expires_at.value_or(std::nullopt), allowed_models.value_or(std::nullopt),
            limits.applied({}), budget.value_or(std::nullopt)};
  }
};

/// A team and the role a user has in it.
struct TeamRole {
  store::Team team;
  Role role = Role::Viewer;
};

class Sessions;

class Accounts {
 public:
  Accounts(store::Store& s, std::string server_secret, PropagationPolicy policy = {},
           SessionPolicy sessions = {});
  ~Accounts();

  /// Console sign-in (sessions.hpp).
  Sessions& sessions() { return *sessions_; }
  /// The store, for reads whose permission the caller checked (the console's spend and audit).
  store::Store& store() { return store_; }

  /// `user`'s role in team `team_id`: refused NotFound alike for a team that does not exist
  /// and for one the user is not a member of (the console never confirms a stranger's team).
  Outcome<TeamRole> memberOf(const store::User& user, const std::string& team_id);
  /// The teams `user` is a member of, each with the role.
  std::vector<TeamRole> teamsOf(const store::User& user);

  /// Makes a team with an opening balance (only the operator may give one), in one transaction.
  /// Its name (checkName) must not look like an existing team's: the same UTS #39 skeleton is a
  /// Conflict that names that team. A user (never the operator) who owns `max_owned` teams or more
  /// is refused (TeamLimit); nullopt: no limit.
  Outcome<store::Team> createTeam(const Actor& actor, const std::string& name,
                                  money::Pico balance = 0,
                                  std::optional<std::int64_t> max_owned = std::nullopt);
  Outcome<std::vector<store::Team>> listTeams(const Actor& actor);
  Outcome<store::Team> showTeam(const Actor& actor, const std::string& name);
  /// The team with its member count and its count of keys not revoked.
  Outcome<TeamSummary> teamSummary(const Actor& actor, const std::string& name);
  /// Adds `amount` to the team's balance (the operator only), refusing a balance that would not
  /// fit; the team as it is then.
  Outcome<store::Team> topUp(const Actor& actor, const std::string& name, money::Pico amount);
  Outcome<Propagation> setTeamActive(const Actor& actor, const std::string& name, bool active);
  /// Whether the team's keys may send tollgate::dryrun requests (an owner's decision).
  Outcome<Propagation> setTeamDryrun(const Actor& actor, const std::string& name, bool allow);
  /// Changes the team's own rate limits (docs/limits.md), audited as team.limits_changed with the
  /// limits before and after. The operator sets any value; an owner or admin only lowers one: to
  /// at most the team's own value, else `team_default` ([limits.team]), never removing one.
  Outcome<Propagation> setTeamLimits(const Actor& actor, const std::string& name,
                                     const RateLimitsChange& change,
                                     const key_rules::RateLimits& team_default = {});

  Outcome<store::User> addUser(const std::string& email, const std::string& display_name);
  /// Forgets the user's identity-provider bindings, so that their address binds to the next
  /// subject that signs in with it (audited user.identity_unlinked); how many there were.
  Outcome<std::int64_t> unlinkUser(const Actor& actor, const std::string& email);
  /// Ends every console session of the user (audited user.sessions_ended); how many.
  Outcome<std::int64_t> endSessions(const Actor& actor, const std::string& email);
  Outcome<Propagation> addMember(const Actor& actor, const std::string& team,
                                 const std::string& email, const std::string& role);
  Outcome<Propagation> setRole(const Actor& actor, const std::string& team,
                               const std::string& email, const std::string& role);
  Outcome<Propagation> removeMember(const Actor& actor, const std::string& team,
                                    const std::string& email);
  Outcome<std::vector<store::Member>> listMembers(const Actor& actor, const std::string& team);

  Outcome<CreatedInvite> createInvite(const Actor& actor, const std::string& team,
                                      const std::string& role,
                                      const std::optional<std::string>& email,
                                      std::chrono::milliseconds valid_for);
  Outcome<std::vector<store::Invite>> listInvites(const Actor& actor, const std::string& team);
  /// Joins the invited team as `email` (a new user is created if needed); `source` as Actor's.
  Outcome<Propagation> acceptInvite(const std::string& token, const std::string& email,
                                    const std::string& source = "");
  Outcome<Ok> revokeInvite(const Actor& actor, const std::string& id);
  /// What invitation `token` offers `email`, writing nothing: only an open one, or one for
  /// `email`, that is neither used, revoked nor expired; any other is NotFound, as an unknown
  /// token is, so that a preview tells nothing of invitations not meant for the caller.
  Outcome<InvitePreview> previewInvite(const std::string& token, const std::string& email);

  /// Makes a key of `team` with `rules` (an expiry in the past is Invalid; the caller checks the
  /// model names against its configuration); its name (checkName) must not look like (have the
  /// skeleton of) that of an active key of the team (Conflict, naming that key).
  Outcome<CreatedKey> createKey(const Actor& actor, const std::string& team,
                                const std::string& name,
                                const std::optional<std::string>& user_email,
                                const key_rules::KeyRules& rules = {});
  Outcome<std::vector<store::ApiKey>> listKeys(const Actor& actor,
                                               const std::optional<std::string>& team);
  /// `which` is a public id or a whole key.
  Outcome<Propagation> revokeKey(const Actor& actor, const std::string& which);
  /// Changes the rules of the key with `public_id` (an owner's or admin's decision, audited as
  /// key.rules_changed with the rules before and after), then waits for the gateways to apply
  /// it, so that a narrowed key is narrowed everywhere when this returns. A new expiry in the
  /// past is Invalid.
  Outcome<Propagation> changeKeyRules(const Actor& actor, const std::string& public_id,
                                      const KeyRulesChange& change);

  /// Makes team `default` with one key, in one transaction, when the store has no team yet;
  /// nullopt otherwise (also when another gateway on the store made it first).
  std::optional<CreatedKey> bootstrap();

  /// The gateways that have not applied change `seq`, at one look.
  std::vector<store::GatewayRecord> laggingGateways(std::int64_t seq);

  /// Appends a row to the audit log (in the caller's transaction, if any): `actor` did `action`
  /// ("key.created", …) to `target` in team `team_id` (empty: none).
  void audit(const Actor& actor, const std::string& team_id, std::string_view action,
             const std::string& target);

 private:
  struct Membership {
    store::Team team;
    store::User user;
    std::string role;
  };
  /// A key just made, and its whole text to show once.
  struct NewKey {
    store::ApiKey key;
    std::string full;
  };

  Outcome<store::Team> requireTeam(const std::string& name);
  /// The member `email` of `team`; refused when either is unknown or not a member.
  Outcome<Membership> requireMember(const std::string& team, const std::string& email);
  Outcome<store::User> requireUser(const std::string& email);
  /// How many teams user `user_id` is an owner of.
  std::int64_t ownedTeams(const std::string& user_id);
  /// Refused unless the actor may do `action` in `team`.
  Outcome<Ok> authorize(const Actor& actor, const store::Team& team, Action action);
  /// Refused unless the actor may do `action` in the team of `key`.
  Outcome<Ok> authorizeOnKey(const Actor& actor, const store::ApiKey& key, Action action);
  /// Runs `change` on the user with `email` (audited as `action`); what it counted.
  Outcome<std::int64_t> changeUser(const Actor& actor, const std::string& email,
                                   std::string_view action,
                                   std::int64_t (store::Store::*change)(const std::string&));
  /// Refused unless the actor may invite to `role` in `team` (an owner's invitation needs
  /// ManageOwners too).
  Outcome<Ok> mayInvite(const Actor& actor, const store::Team& team, Role role);
  /// Refused (Conflict) unless the invitation's maker may still make it: the operator's always
  /// may; a user only while their role in the team may invite to its role.
  Outcome<Ok> makerMayStillInvite(const store::Invite& inv);
  /// The keyed hash the store keeps of invitation `token`; nullopt when it is not one's shape.
  std::optional<std::string> inviteHash(std::string_view token) const;
  /// Writes a new key of team `team_id`, in the caller's transaction.
  NewKey makeKey(const std::string& team_id, const std::string& name,
                 const std::optional<std::string>& owner_id, const key_rules::KeyRules& rules);
  /// Waits (within the policy) until every gateway has applied change `seq` or is fenced.
  Propagation awaitGateways(std::int64_t seq);
  /// Makes `change` to team `name` (a decision of its owners', Action::SuspendTeam) in one
  /// transaction that authentication must see, then waits for the gateways to apply it.
  Outcome<Propagation> changeTeam(const Actor& actor, const std::string& name,
                                  std::string_view action,
                                  const std::function<void(const store::Team&)>& change);

  store::Store& store_;
  std::string server_secret_;
  PropagationPolicy policy_;
  std::unique_ptr<Sessions> sessions_;
};

/// Checks a team, key or display name: 1 to 100 characters of UTF-8, not blank, no control
/// characters and none that would not show as itself (format, private-use or unassigned: bidi
/// overrides, zero-width spaces); the name as it is stored, in NFC.
Outcome<std::string> checkName(std::string_view what, const std::string& name);
/// Normalises an email address (lower case) and checks its shape.
Outcome<std::string> checkEmail(const std::string& email);
/// Reads an amount of USD as people type it: digits, then at most one point and more digits, at
/// most 12 decimal places.
Outcome<money::Pico> parseAmount(std::string_view text);

}  // namespace tollgate::accounts
