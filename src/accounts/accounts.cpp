#include "accounts/accounts.hpp"

#include <algorithm>
#include <functional>
#include <thread>
#include <tuple>

#include "accounts/records_json.hpp"
#include "accounts/sessions.hpp"
#include "auth/api_key.hpp"
#include "core/email.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "core/unicode.hpp"

namespace tollgate::accounts {
namespace {

constexpr std::size_t kMaxNameChars = 100;
constexpr std::string_view kInvitePrefix = "inv-tollgate-";
constexpr std::size_t kInviteSecretLength = 32;

/// `s` in quotes for a message, what would not show as itself escaped (`\u202E`).
std::string quoted(const std::string& s) { return "\"" + unicode::visible(s, 120) + "\""; }

Refusal invalid(std::string message) { return {RefusalKind::Invalid, std::move(message)}; }
Refusal notFound(std::string message) { return {RefusalKind::NotFound, std::move(message)}; }
Refusal forbidden(std::string message) { return {RefusalKind::Forbidden, std::move(message)}; }
Refusal conflict(std::string message) { return {RefusalKind::Conflict, std::move(message)}; }

/// Refused when a key would be made to expire at or before now.
std::optional<Refusal> pastExpiry(const std::optional<std::int64_t>& expires_at) {
  if (expires_at && *expires_at <= store::nowMs()) {
    return invalid("expires_at must be in the future");
  }
  return std::nullopt;
}

/// A key's rules as the audit log records them.
std::string rulesJson(const key_rules::KeyRules& rules) {
  json::Writer w;
  w.startObject();
  writeKeyRules(w, rules);
  w.endObject();
  return w.take();
}

std::string limitsJson(const key_rules::RateLimits& limits) {
  json::Writer w;
  w.startObject();
  writeRateLimits(w, limits);
  w.endObject();
  return w.take();
}

Outcome<Role> requireRole(const std::string& role) {
  const auto r = parseRole(role);
  if (!r) {
    return invalid("unknown role " + quoted(role) + ": owner, admin, member or viewer");
  }
  return *r;
}

/// What an amount typed by a person is: digits, then at most one point and more digits.
/// money::parseUsd also reads TOML's exponents and underscores, for prices in the configuration;
/// someone typing `1e6` or `1_000` where "10 or 0.25" is asked for has more likely made a mistake.
bool plainDecimal(std::string_view text) {
  const std::size_t point = text.find('.');
  const auto digits = [](std::string_view part) {
    return !part.empty() &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return point == std::string_view::npos
             ? digits(text)
             : digits(text.substr(0, point)) && digits(text.substr(point + 1));
}

/// Only the operator adds money to a balance, and never a negative amount.
Outcome<Ok> checkAddition(const Actor& actor, money::Pico amount) {
  if (actor.email) {
    return forbidden("only the operator may add to a balance");
  }
  if (amount < 0) {
    return invalid("an amount to add must not be negative");
  }
  return Ok{};
}

}  // namespace

Outcome<std::string> checkName(std::string_view what, const std::string& name) {
  if (!text::isValidUtf8(name)) {
    return invalid(std::string(what) + " must be valid UTF-8");
  }
  if (text::hasControlCharacters(name)) {
    return invalid(std::string(what) + " must not contain control characters");
  }
  if (const std::optional<char32_t> c = unicode::firstHidden(name)) {
    return invalid(std::string(what) + " must not contain " + unicode::codePointName(*c) +
                   " (a format, private-use or unassigned character, which does not show as "
                   "itself)");
  }
  std::string normal = unicode::nfc(name);
  if (normal.find_first_not_of(' ') == std::string::npos) {
    return invalid(std::string(what) + " must not be empty");
  }
  if (text::codePoints(normal) > kMaxNameChars) {
    return invalid(std::string(what) + " must be at most " + std::to_string(kMaxNameChars) +
                   " characters");
  }
  return normal;
}

Outcome<std::string> checkEmail(const std::string& email) {
  std::optional<std::string> e = tollgate::email::normalize(email);
  if (!e) {
    return invalid("not an email address: " + quoted(email));
  }
  return std::move(*e);
}

Outcome<money::Pico> parseAmount(std::string_view text) {
  const auto amount = plainDecimal(text) ? money::parseUsd(text) : std::nullopt;
  if (!amount) {
    return invalid(
        "an amount must be a decimal number of USD such as 10 or 0.25, at most 12 "
        "decimal places");
  }
  return *amount;
}

Accounts::Accounts(store::Store& s, std::string server_secret, PropagationPolicy policy,
                   SessionPolicy sessions)
    : store_(s),
      server_secret_(std::move(server_secret)),
      policy_(policy),
      sessions_(std::make_unique<Sessions>(s, server_secret_, sessions)) {}

Accounts::~Accounts() = default;

Outcome<TeamRole> Accounts::memberOf(const store::User& user, const std::string& team_id) {
  const auto role = store_.roleOf(team_id, user.id);
  auto team = role ? store_.findTeamById(team_id) : std::nullopt;
  if (!team) {
    return notFound("no such team");
  }
  return TeamRole{*std::move(team), parseRole(*role).value_or(Role::Viewer)};
}

std::vector<TeamRole> Accounts::teamsOf(const store::User& user) {
  std::vector<TeamRole> out;
  for (auto& [team, role] : store_.teamsOf(user.id)) {
    out.push_back({std::move(team), parseRole(role).value_or(Role::Viewer)});
  }
  return out;
}

Outcome<store::Team> Accounts::requireTeam(const std::string& name) {
  auto t = store_.findTeam(name);
  // Names are stored in NFC; one typed in another form names the same team.
  if (!t && text::isValidUtf8(name)) {
    t = store_.findTeam(unicode::nfc(name));
  }
  if (!t) {
    return notFound("no team named " + quoted(name));
  }
  return *std::move(t);
}

Outcome<store::User> Accounts::requireUser(const std::string& email) {
  const Outcome<std::string> e = checkEmail(email);
  if (!e) {
    return e.error();
  }
  auto u = store_.findUser(*e);
  if (!u) {
    return notFound("no user " + quoted(email) + " (add one with: users add EMAIL)");
  }
  return *std::move(u);
}

Outcome<Accounts::Membership> Accounts::requireMember(const std::string& team,
                                                      const std::string& email) {
  Outcome<store::Team> t = requireTeam(team);
  if (!t) {
    return t.error();
  }
  store_.lockTeam(t->id);  // Before the roles are read: changes of one team run in turn.
  Outcome<store::User> u = requireUser(email);
  if (!u) {
    return u.error();
  }
  const auto role = store_.roleOf(t->id, u->id);
  if (!role) {
    return notFound(u->email + " is not a member of " + quoted(team));
  }
  return Membership{std::move(t).value(), std::move(u).value(), *role};
}

Outcome<Ok> Accounts::authorize(const Actor& actor, const store::Team& team, Action action) {
  if (!actor.email) {
    return Ok{};  // The operator.
  }
  const auto user = store_.findUser(*actor.email);
  const auto role = user ? store_.roleOf(team.id, user->id) : std::nullopt;
  if (!role) {
    return forbidden(*actor.email + " is not a member of team " + quoted(team.name));
  }
  if (!allowed(*parseRole(*role), action)) {
    return forbidden("a team " + *role + " may not do this");
  }
  return Ok{};
}

Outcome<Ok> Accounts::mayInvite(const Actor& actor, const store::Team& team, Role role) {
  if (const Outcome<Ok> may = authorize(actor, team, Action::Invite); !may) {
    return may;
  }
  return role == Role::Owner ? authorize(actor, team, Action::ManageOwners) : Outcome<Ok>(Ok{});
}

Outcome<Ok> Accounts::makerMayStillInvite(const store::Invite& inv) {
  if (!inv.created_by) {
    return Ok{};  // The operator's: valid until it expires or is revoked.
  }
  const auto maker = store_.findUserById(*inv.created_by);
  const auto team = store_.findTeam(inv.team);
  if (!maker || !team || !mayInvite(Actor{maker->email, ""}, *team, *parseRole(inv.role))) {
    return conflict(
        "this invitation no longer holds: the person who made it may no longer "
        "invite to this role; ask a team admin for a new one");
  }
  return Ok{};
}

void Accounts::audit(const Actor& actor, const std::string& team_id, std::string_view action,
                     const std::string& target) {
  store_.appendAudit({.actor = actor.email.value_or("operator"),
                      .team_id = team_id,
                      .action = std::string(action),
                      .target = target,
                      .source = actor.source.empty() ? std::string("cli") : actor.source});
}

bool allFenced(const Propagation& p, const PropagationPolicy& policy) {
  return std::all_of(p.lagging.begin(), p.lagging.end(), [&](const store::GatewayRecord& g) {
    return g.silent_ms > g.lease_ms + policy.margin.count();
  });
}

std::vector<store::GatewayRecord> Accounts::laggingGateways(std::int64_t seq) {
  return store_.laggingGateways(seq);
}

Propagation Accounts::awaitGateways(std::int64_t seq) {
  Propagation p{seq, laggingGateways(seq)};
  const auto deadline = std::chrono::steady_clock::now() + policy_.wait;
  while (!allFenced(p, policy_) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(policy_.poll);
    p.lagging = laggingGateways(seq);
  }
  return p;
}

Outcome<store::Team> Accounts::createTeam(const Actor& actor, const std::string& given,
                                          money::Pico balance,
                                          std::optional<std::int64_t> max_owned) {
  const Outcome<std::string> checked = checkName("a team name", given);
  if (!checked) {
    return checked.error();
  }
  const std::string& name = *checked;
  if (balance != 0) {
    if (const Outcome<Ok> may = checkAddition(actor, balance); !may) {
      return may.error();
    }
  }
  store::Transaction tx(store_.connection());
  if (const std::optional<store::Team> like = store_.findLookAlikeTeam(name)) {
    return conflict(like->name == name
                        ? "a team named " + quoted(name) + " already exists"
                        : "a team name " + quoted(name) + " looks like that of the existing team " +
                              quoted(like->name));
  }
  std::optional<store::User> owner;
  if (actor.email) {
    Outcome<store::User> u = requireUser(*actor.email);
    if (!u) {
      return u.error();
    }
    owner = std::move(u).value();
    if (max_owned && ownedTeams(owner->id) >= *max_owned) {
      return Refusal{RefusalKind::TeamLimit,
                     *max_owned == 0 ? std::string("only the operator creates teams here")
                                     : "you own " + std::to_string(*max_owned) +
                                           " teams already, as many as a user may create"};
    }
  }
  store::Team t = store_.createTeam(name);
  if (owner) {
    store_.addMember(t.id, owner->id, "owner");
  }
  if (balance != 0) {
    store_.topUp(t.id, balance);
    t.balance = balance;
  }
  audit(actor, t.id, "team.created", name);
  if (balance != 0) {
    audit(actor, t.id, "team.topped_up", money::formatUsd(balance) + " USD");
  }
  tx.commit();
  return t;
}

std::int64_t Accounts::ownedTeams(const std::string& user_id) {
  const auto teams = store_.teamsOf(user_id);
  return std::count_if(teams.begin(), teams.end(),
                       [](const auto& team_role) { return team_role.second == "owner"; });
}

Outcome<std::vector<store::Team>> Accounts::listTeams(const Actor& actor) {
  std::vector<store::Team> all = store_.listTeams();
  if (actor.email) {
    const auto user = store_.findUser(*actor.email);
    std::erase_if(all, [&](const store::Team& t) {
      return !user || !store_.roleOf(t.id, user->id).has_value();
    });
  }
  return all;
}

Outcome<store::Team> Accounts::showTeam(const Actor& actor, const std::string& name) {
  Outcome<store::Team> t = requireTeam(name);
  if (!t) {
    return t;
  }
  if (const Outcome<Ok> may = authorize(actor, *t, Action::ViewTeam); !may) {
    return may.error();
  }
  return t;
}

Outcome<TeamSummary> Accounts::teamSummary(const Actor& actor, const std::string& name) {
  Outcome<store::Team> t = showTeam(actor, name);
  if (!t) {
    return t.error();
  }
  TeamSummary s{std::move(t).value()};
  s.members = static_cast<std::int64_t>(store_.listMembers(s.team.id).size());
  for (const store::ApiKey& k : store_.listKeys(s.team.id)) {
    s.active_keys += k.revoked_at ? 0 : 1;
  }
  return s;
}

Outcome<store::Team> Accounts::topUp(const Actor& actor, const std::string& name,
                                     money::Pico amount) {
  if (const Outcome<Ok> may = checkAddition(actor, amount); !may) {
    return may.error();
  }
  store::Transaction tx(store_.connection());
  const Outcome<store::Team> t = requireTeam(name);
  if (!t) {
    return t;
  }
  if (!money::plus(t->balance, amount)) {
    return conflict("that balance would be too large");
  }
  store_.topUp(t->id, amount);
  audit(actor, t->id, "team.topped_up", money::formatUsd(amount) + " USD");
  std::optional<store::Team> after = store_.findTeam(name);
  tx.commit();
  return *std::move(after);
}

Outcome<Propagation> Accounts::setTeamActive(const Actor& actor, const std::string& name,
                                             bool active) {
  return changeTeam(
      actor, name, active ? "team.resumed" : "team.suspended",
      [&](const store::Team& t) { store_.setTeamState(t.id, active ? "active" : "suspended"); });
}

Outcome<Propagation> Accounts::setTeamDryrun(const Actor& actor, const std::string& name,
                                             bool allow) {
  return changeTeam(actor, name, allow ? "team.dryrun_allowed" : "team.dryrun_refused",
                    [&](const store::Team& t) { store_.setTeamDryrun(t.id, allow); });
}

Outcome<Propagation> Accounts::setTeamLimits(const Actor& actor, const std::string& name,
                                             const RateLimitsChange& change,
                                             const key_rules::RateLimits& team_default) {
  store::Transaction tx(store_.connection());
  const Outcome<store::Team> t = requireTeam(name);
  if (!t) {
    return t.error();
  }
  if (actor.email) {
    // An owner or admin only lowers: each value at or below the team's own, else the default.
    if (const Outcome<Ok> may = authorize(actor, *t, Action::RevokeAnyKey); !may) {
      return may.error();
    }
    for (const auto& [word, to, own, fallback] :
         {std::tuple{"rpm", change.rpm, t->limits.rpm, team_default.rpm},
          std::tuple{"tpm", change.tpm, t->limits.tpm, team_default.tpm},
          std::tuple{"concurrent", change.concurrent, t->limits.concurrent,
                     team_default.concurrent}}) {
      const std::optional<std::int64_t> most = own ? own : fallback;
      if (to && (!*to || (most && **to > *most))) {
        return invalid(std::string(word) + " may only be lowered here, to " +
                       (most ? "at most " + std::to_string(*most) : "a number") +
                       "; only the operator raises or removes a team's limit");
      }
    }
  }
  const key_rules::RateLimits after = change.applied(t->limits);
  store_.setTeamLimits(t->id, after);
  audit(actor, t->id, "team.limits_changed",
        name + " before " + limitsJson(t->limits) + " after " + limitsJson(after));
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Outcome<Propagation> Accounts::changeTeam(const Actor& actor, const std::string& name,
                                          std::string_view action,
                                          const std::function<void(const store::Team&)>& change) {
  store::Transaction tx(store_.connection());
  const Outcome<store::Team> t = requireTeam(name);
  if (!t) {
    return t.error();
  }
  if (const Outcome<Ok> may = authorize(actor, *t, Action::SuspendTeam); !may) {
    return may.error();
  }
  change(*t);
  audit(actor, t->id, action, name);
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Outcome<store::User> Accounts::addUser(const std::string& email, const std::string& display_name) {
  const Outcome<std::string> e = checkEmail(email);
  if (!e) {
    return e.error();
  }
  std::string name;
  if (!display_name.empty()) {
    Outcome<std::string> checked = checkName("a display name", display_name);
    if (!checked) {
      return checked.error();
    }
    name = std::move(checked).value();
  }
  store::Transaction tx(store_.connection());
  if (store_.findUser(*e)) {
    return conflict("a user " + quoted(*e) + " already exists");
  }
  store::User u = store_.addUser(*e, name);
  tx.commit();
  return u;
}

Outcome<std::int64_t> Accounts::unlinkUser(const Actor& actor, const std::string& email) {
  return changeUser(actor, email, "user.identity_unlinked", &store::Store::unbindIdentities);
}

Outcome<std::int64_t> Accounts::endSessions(const Actor& actor, const std::string& email) {
  return changeUser(actor, email, "user.sessions_ended", &store::Store::deleteSessionsOf);
}

Outcome<std::int64_t> Accounts::changeUser(
    const Actor& actor, const std::string& email, std::string_view action,
    std::int64_t (store::Store::*change)(const std::string&)) {
  store::Transaction tx(store_.connection());
  const Outcome<store::User> u = requireUser(email);
  if (!u) {
    return u.error();
  }
  const std::int64_t n = (store_.*change)(u->id);
  audit(actor, "", action, u->email);
  tx.commit();
  return n;
}

Outcome<Propagation> Accounts::addMember(const Actor& actor, const std::string& team,
                                         const std::string& email, const std::string& role) {
  const Outcome<Role> r = requireRole(role);
  if (!r) {
    return r.error();
  }
  store::Transaction tx(store_.connection());
  const Outcome<store::Team> t = requireTeam(team);
  if (!t) {
    return t.error();
  }
  store_.lockTeam(t->id);
  const Action action = *r == Role::Owner ? Action::ManageOwners : Action::ChangeRoles;
  if (const Outcome<Ok> may = authorize(actor, *t, action); !may) {
    return may.error();
  }
  const Outcome<store::User> u = requireUser(email);
  if (!u) {
    return u.error();
  }
  if (store_.roleOf(t->id, u->id)) {
    return conflict(u->email + " is already a member of " + quoted(team) +
                    " (change the role with: members role)");
  }
  store_.addMember(t->id, u->id, std::string(roleName(*r)));
  audit(actor, t->id, "member.added", u->email + " as " + std::string(roleName(*r)));
  // A returning member's keys work again.
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Outcome<Propagation> Accounts::setRole(const Actor& actor, const std::string& team,
                                       const std::string& email, const std::string& role) {
  const Outcome<Role> r = requireRole(role);
  if (!r) {
    return r.error();
  }
  store::Transaction tx(store_.connection());
  const Outcome<Membership> m = requireMember(team, email);
  if (!m) {
    return m.error();
  }
  const bool owners = *r == Role::Owner || m->role == "owner";
  if (const Outcome<Ok> may =
          authorize(actor, m->team, owners ? Action::ManageOwners : Action::ChangeRoles);
      !may) {
    return may.error();
  }
  if (m->role == "owner" && *r != Role::Owner && store_.countOwners(m->team.id) == 1) {
    return conflict(m->user.email + " is the last owner of " + quoted(team) +
                    ": make another member owner first");
  }
  store_.setRole(m->team.id, m->user.id, std::string(roleName(*r)));
  audit(actor, m->team.id, "member.role_changed",
        m->user.email + " from " + m->role + " to " + std::string(roleName(*r)));
  // A role that may not create keys stops the member's keys; one that may starts them again.
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Outcome<Propagation> Accounts::removeMember(const Actor& actor, const std::string& team,
                                            const std::string& email) {
  store::Transaction tx(store_.connection());
  const Outcome<Membership> m = requireMember(team, email);
  if (!m) {
    return m.error();
  }
  const Action action = m->role == "owner" ? Action::ManageOwners : Action::ChangeRoles;
  if (const Outcome<Ok> may = authorize(actor, m->team, action); !may) {
    return may.error();
  }
  if (m->role == "owner" && store_.countOwners(m->team.id) == 1) {
    return conflict(m->user.email + " is the last owner of " + quoted(team) +
                    " and cannot be removed");
  }
  store_.removeMember(m->team.id, m->user.id);
  audit(actor, m->team.id, "member.removed", m->user.email);
  const std::int64_t seq = store_.bumpChange();  // Their keys stop working.
  tx.commit();
  return awaitGateways(seq);
}

Outcome<std::vector<store::Member>> Accounts::listMembers(const Actor& actor,
                                                          const std::string& team) {
  const Outcome<store::Team> t = showTeam(actor, team);
  if (!t) {
    return t.error();
  }
  return store_.listMembers(t->id);
}

Outcome<CreatedInvite> Accounts::createInvite(const Actor& actor, const std::string& team,
                                              const std::string& role,
                                              const std::optional<std::string>& email,
                                              std::chrono::milliseconds valid_for) {
  const Outcome<Role> r = requireRole(role);
  if (!r) {
    return r.error();
  }
  std::optional<std::string> invited;
  if (email) {
    Outcome<std::string> e = checkEmail(*email);
    if (!e) {
      return e.error();
    }
    invited = std::move(e).value();
  }
  if (valid_for <= std::chrono::milliseconds::zero()) {
    return invalid("an invitation must be valid for some time");
  }
  store::Transaction tx(store_.connection());
  const Outcome<store::Team> t = requireTeam(team);
  if (!t) {
    return t.error();
  }
  store_.lockTeam(t->id);
  if (const Outcome<Ok> may = mayInvite(actor, *t, *r); !may) {
    return may.error();
  }
  const std::string secret = auth::randomBase62(kInviteSecretLength);
  const std::string hash = auth::toHex(auth::keyedHash(server_secret_, secret));
  const auto maker = actor.email ? store_.findUser(*actor.email) : std::nullopt;
  store::Invite inv = store_.createInvite(t->id, std::string(roleName(*r)), invited, hash,
                                          store::nowMs() + valid_for.count(),
                                          maker ? std::optional(maker->id) : std::nullopt);
  audit(actor, t->id, "invitation.created",
        inv.id + " (" + inv.role + (invited ? ", for " + *invited : std::string(", open")) + ")");
  tx.commit();
  return CreatedInvite{std::move(inv), std::string(kInvitePrefix) + secret};
}

Outcome<std::vector<store::Invite>> Accounts::listInvites(const Actor& actor,
                                                          const std::string& team) {
  const Outcome<store::Team> t = requireTeam(team);
  if (!t) {
    return t.error();
  }
  if (const Outcome<Ok> may = authorize(actor, *t, Action::Invite); !may) {
    return may.error();
  }
  return store_.listInvites(t->id);
}

Outcome<Propagation> Accounts::acceptInvite(const std::string& token, const std::string& email,
                                            const std::string& source) {
  const Outcome<std::string> e = checkEmail(email);
  if (!e) {
    return e.error();
  }
  const std::optional<std::string> hash = inviteHash(token);
  if (!hash) {
    return invalid("not an invitation token");
  }
  store::Transaction tx(store_.connection());
  auto inv = store_.findInviteByHash(*hash);
  if (!inv) {
    return notFound("unknown invitation");
  }
  // Under the team's lock, read again: what another acceptance or a change of the maker's role
  // committed meanwhile is seen.
  store_.lockTeam(inv->team_id);
  inv = store_.findInvite(inv->id);
  if (inv->revoked_at) {
    return conflict("this invitation was revoked");
  }
  if (inv->accepted_at) {
    return conflict("this invitation was already used");
  }
  if (inv->expires_at <= store::nowMs()) {
    return conflict("this invitation has expired");
  }
  if (inv->email && *inv->email != *e) {
    return forbidden("this invitation is for another email address");
  }
  if (const Outcome<Ok> holds = makerMayStillInvite(*inv); !holds) {
    return holds.error();
  }
  auto user = store_.findUser(*e);
  if (!user) {
    user = store_.addUser(*e, "");
  }
  if (store_.roleOf(inv->team_id, user->id)) {
    return conflict(*e + " is already a member of " + quoted(inv->team));
  }
  if (!store_.acceptInvite(inv->id, user->id)) {
    return conflict("this invitation was already used");
  }
  store_.addMember(inv->team_id, user->id, inv->role);
  audit({*e, source}, inv->team_id, "invitation.accepted", inv->id + " (" + inv->role + ")");
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Outcome<InvitePreview> Accounts::previewInvite(const std::string& token, const std::string& email) {
  const Outcome<std::string> e = checkEmail(email);
  const std::optional<std::string> hash = inviteHash(token);
  const auto inv = hash ? store_.findInviteByHash(*hash) : std::nullopt;
  const bool open =
      inv && !inv->revoked_at && !inv->accepted_at && inv->expires_at > store::nowMs();
  if (!e || !open || (inv->email && *inv->email != *e)) {
    return notFound("unknown invitation");
  }
  std::string invited_by = "operator";
  if (inv->created_by) {
    const auto maker = store_.findUserById(*inv->created_by);
    if (!maker) {
      return notFound("unknown invitation");
    }
    invited_by = maker->email;
  }
  return InvitePreview{inv->team, inv->role, invited_by};
}

Outcome<Ok> Accounts::revokeInvite(const Actor& actor, const std::string& id) {
  store::Transaction tx(store_.connection());
  const auto inv = store_.findInvite(id);
  if (!inv) {
    return notFound("no invitation " + quoted(id));
  }
  const Outcome<store::Team> t = requireTeam(inv->team);
  if (!t) {
    return t.error();
  }
  if (const Outcome<Ok> may = authorize(actor, *t, Action::Invite); !may) {
    return may.error();
  }
  if (inv->accepted_at) {
    return conflict("this invitation was already used");
  }
  if (!inv->revoked_at) {
    store_.revokeInvite(inv->id);
    audit(actor, t->id, "invitation.revoked", inv->id);
  }
  tx.commit();
  return Ok{};
}

std::optional<std::string> Accounts::inviteHash(std::string_view token) const {
  if (!token.starts_with(kInvitePrefix) ||
      token.size() != kInvitePrefix.size() + kInviteSecretLength) {
    return std::nullopt;
  }
  return auth::toHex(auth::keyedHash(server_secret_, token.substr(kInvitePrefix.size())));
}

Accounts::NewKey Accounts::makeKey(const std::string& team_id, const std::string& name,
                                   const std::optional<std::string>& owner_id,
                                   const key_rules::KeyRules& rules) {
  const auth::NewKey fresh = auth::generateKey();
  return {
      store_.createKey(fresh.public_id, auth::toHex(auth::keyedHash(server_secret_, fresh.secret)),
                       name, team_id, owner_id, rules),
      fresh.full};
}

Outcome<CreatedKey> Accounts::createKey(const Actor& actor, const std::string& team,
                                        const std::string& given,
                                        const std::optional<std::string>& user_email,
                                        const key_rules::KeyRules& rules) {
  const Outcome<std::string> checked = checkName("a key name", given);
  if (!checked) {
    return checked.error();
  }
  if (const auto past = pastExpiry(rules.expires_at)) {
    return *past;
  }
  const std::string& name = *checked;
  store::Transaction tx(store_.connection());
  const Outcome<store::Team> t = requireTeam(team);
  if (!t) {
    return t.error();
  }
  if (const Outcome<Ok> may = authorize(actor, *t, Action::CreateKey); !may) {
    return may.error();
  }
  // A user creates keys as themselves; the operator may name the user the key belongs to.
  const std::optional<std::string> owner_email = actor.email ? actor.email : user_email;
  std::optional<std::string> owner_id;
  if (owner_email) {
    const Outcome<store::User> u = requireUser(*owner_email);
    if (!u) {
      return u.error();
    }
    if (!store_.roleOf(t->id, u->id)) {
      return notFound(u->email + " is not a member of " + quoted(team));
    }
    owner_id = u->id;
  }
  const std::string skeleton = unicode::skeleton(name);
  for (const store::ApiKey& k : store_.listKeys(t->id)) {
    if (k.revoked_at || unicode::skeleton(k.name) != skeleton) {
      continue;
    }
    return conflict(k.name == name
                        ? "team " + quoted(t->name) + " already has an active key named " +
                              quoted(name)
                        : "a key name " + quoted(name) + " looks like that of the active key " +
                              quoted(k.name) + " of team " + quoted(t->name));
  }
  NewKey made = makeKey(t->id, name, owner_id, rules);
  audit(actor, t->id, "key.created", made.key.public_id + " (" + name + ")");
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return CreatedKey{std::move(made.key), std::move(made.full), awaitGateways(seq)};
}

Outcome<std::vector<store::ApiKey>> Accounts::listKeys(const Actor& actor,
                                                       const std::optional<std::string>& team) {
  if (!team) {
    if (actor.email) {
      return invalid("name the team");
    }
    return store_.listKeys(std::nullopt);
  }
  const Outcome<store::Team> t = showTeam(actor, *team);
  if (!t) {
    return t.error();
  }
  return store_.listKeys(t->id);
}

Outcome<Ok> Accounts::authorizeOnKey(const Actor& actor, const store::ApiKey& key, Action action) {
  if (!actor.email) {
    return Ok{};
  }
  const Outcome<store::Team> t = requireTeam(key.team);
  if (!t) {
    return t.error();
  }
  return authorize(actor, *t, action);
}

Outcome<Propagation> Accounts::revokeKey(const Actor& actor, const std::string& which) {
  std::string public_id = which;
  if (which.starts_with(auth::kKeyPrefix)) {
    const auth::ParsedKey parsed = auth::parseKey(which);
    if (parsed.shape != auth::KeyShape::Ok) {
      return invalid("not an API key");  // Never echo what may be most of a secret.
    }
    public_id = std::string(parsed.public_id);
  } else if (!auth::isPublicId(which)) {
    return invalid("not a key's public id: " + quoted(which));
  }
  store::Transaction tx(store_.connection());
  const auto key = store_.findKey(public_id);
  if (!key) {
    return notFound("no key with public id " + public_id);
  }
  // A creator may revoke their own key while still a member.
  const Action action = key->created_by == actor.email ? Action::ViewTeam : Action::RevokeAnyKey;
  if (const Outcome<Ok> may = authorizeOnKey(actor, *key, action); !may) {
    return may.error();
  }
  if (key->revoked_at) {
    return conflict("key " + public_id + " is already revoked");
  }
  store_.revokeKey(key->id);
  audit(actor, key->team_id, "key.revoked", public_id + " (" + key->name + ")");
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Outcome<Propagation> Accounts::changeKeyRules(const Actor& actor, const std::string& public_id,
                                              const KeyRulesChange& change) {
  if (!auth::isPublicId(public_id)) {
    return invalid("not a key's public id: " + quoted(public_id));
  }
  if (change.expires_at) {
    if (const auto past = pastExpiry(*change.expires_at)) {
      return *past;
    }
  }
  store::Transaction tx(store_.connection());
  const auto key = store_.findKey(public_id);
  if (!key) {
    return notFound("no key with public id " + public_id);
  }
  // Its creator set its rules when making it; changing them is a decision of the team's.
  if (const Outcome<Ok> may = authorizeOnKey(actor, *key, Action::RevokeAnyKey); !may) {
    return may.error();
  }
  if (key->revoked_at) {
    return conflict("key " + public_id + " is revoked");
  }
  key_rules::KeyRules after = key->rules;
  if (change.expires_at) {
    after.expires_at = *change.expires_at;
  }
  if (change.allowed_models) {
    after.allowed_models = *change.allowed_models;
  }
  after.limits = change.limits.applied(after.limits);
  if (change.budget) {
    after.budget = *change.budget;
  }
  store_.setKeyRules(key->id, after);
  audit(actor, key->team_id, "key.rules_changed",
        public_id + " (" + key->name + ") before " + rulesJson(key->rules) + " after " +
            rulesJson(after));
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

std::optional<CreatedKey> Accounts::bootstrap() {
  std::int64_t seq = 0;
  NewKey made;
  try {
    store::Transaction tx(store_.connection());
    if (!store_.listTeams().empty()) {
      return std::nullopt;
    }
    const store::Team team = store_.createTeam("default");
    made = makeKey(team.id, "default", std::nullopt, {});
    const Actor first_start{std::nullopt, "first start"};
    audit(first_start, team.id, "team.created", team.name);
    audit(first_start, team.id, "key.created", made.key.public_id + " (default)");
    seq = store_.bumpChange();
    tx.commit();
  } catch (const store::StoreError& e) {
    if (e.kind() != store::StoreError::Kind::Conflict) {
      throw;
    }
    return std::nullopt;  // Another gateway on the same store made it first.
  }
  return CreatedKey{std::move(made.key), std::move(made.full), awaitGateways(seq)};
}

}  // namespace tollgate::accounts
