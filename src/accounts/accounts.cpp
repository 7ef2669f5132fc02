#include "accounts/accounts.hpp"

#include <algorithm>
#include <thread>

#include "auth/api_key.hpp"
#include "core/text.hpp"

namespace tollgate::accounts {
namespace {

constexpr std::size_t kMaxNameChars = 100;
constexpr std::size_t kMaxEmailBytes = 254;
constexpr std::string_view kInvitePrefix = "inv-tollgate-";
constexpr std::size_t kInviteSecretLength = 32;
constexpr std::chrono::milliseconds kPollInterval{20};

std::string quoted(const std::string& s) { return "\"" + text::printable(s, 120) + "\""; }

Role requireRole(const std::string& role) {
  const auto r = parseRole(role);
  if (!r) {
    throw UserError("unknown role " + quoted(role) + ": owner, admin, member or viewer");
  }
  return *r;
}

}  // namespace

void checkName(std::string_view what, const std::string& name) {
  if (!text::isValidUtf8(name)) {
    throw UserError(std::string(what) + " must be valid UTF-8");
  }
  if (text::hasControlCharacters(name)) {
    throw UserError(std::string(what) + " must not contain control characters");
  }
  if (name.find_first_not_of(' ') == std::string::npos) {
    throw UserError(std::string(what) + " must not be empty");
  }
  if (text::codePoints(name) > kMaxNameChars) {
    throw UserError(std::string(what) + " must be at most " + std::to_string(kMaxNameChars) +
                    " characters");
  }
}

std::string checkEmail(const std::string& email) {
  std::string e = email;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
  });
  const std::size_t at = e.find('@');
  if (e.size() > kMaxEmailBytes || !text::isValidUtf8(e) || text::hasControlCharacters(e) ||
      e.find(' ') != std::string::npos || at == 0 || at == std::string::npos ||
      at + 1 == e.size() || e.find('@', at + 1) != std::string::npos) {
    throw UserError("not an email address: " + quoted(email));
  }
  return e;
}

Accounts::Accounts(store::Store& s, std::string server_secret, PropagationPolicy policy)
    : store_(s), server_secret_(std::move(server_secret)), policy_(policy) {}

store::Team Accounts::requireTeam(const std::string& name) {
  auto t = store_.findTeam(name);
  if (!t) {
    throw UserError("no team named " + quoted(name));
  }
  return *t;
}

store::User Accounts::requireUser(const std::string& email) {
  auto u = store_.findUser(checkEmail(email));
  if (!u) {
    throw UserError("no user " + quoted(email) + " (add one with: users add EMAIL)");
  }
  return *u;
}

Accounts::Membership Accounts::requireMember(const std::string& team, const std::string& email) {
  Membership m{requireTeam(team), requireUser(email), {}};
  const auto role = store_.roleOf(m.team.id, m.user.id);
  if (!role) {
    throw UserError(m.user.email + " is not a member of " + quoted(team));
  }
  m.role = *role;
  return m;
}

void Accounts::authorize(const Actor& actor, const store::Team& team, Action action) {
  if (!actor.email) {
    return;  // The operator.
  }
  const auto user = store_.findUser(*actor.email);
  const auto role = user ? store_.roleOf(team.id, user->id) : std::nullopt;
  if (!role) {
    throw UserError(*actor.email + " is not a member of team " + quoted(team.name));
  }
  if (!allowed(*parseRole(*role), action)) {
    throw UserError("a team " + *role + " may not do this");
  }
}

Propagation Accounts::awaitGateways(std::int64_t seq) {
  Propagation p{seq, {}};
  const auto deadline = std::chrono::steady_clock::now() + policy_.wait;
  for (;;) {
    p.lagging = store_.laggingGateways(seq, policy_.alive_window.count());
    if (p.lagging.empty() || std::chrono::steady_clock::now() >= deadline) {
      return p;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
}

store::Team Accounts::createTeam(const Actor& actor, const std::string& name) {
  checkName("a team name", name);
  store::Connection& c = store_.connection();
  store::Transaction tx(c);
  if (store_.findTeam(name)) {
    throw UserError("a team named " + quoted(name) + " already exists");
  }
  store::Team t = store_.createTeam(name);
  if (actor.email) {
    store_.addMember(t.id, requireUser(*actor.email).id, "owner");
  }
  tx.commit();
  return t;
}

std::vector<store::Team> Accounts::listTeams(const Actor& actor) {
  std::vector<store::Team> all = store_.listTeams();
  if (actor.email) {
    const auto user = store_.findUser(*actor.email);
    std::erase_if(all, [&](const store::Team& t) {
      return !user || !store_.roleOf(t.id, user->id).has_value();
    });
  }
  return all;
}

store::Team Accounts::showTeam(const Actor& actor, const std::string& name) {
  store::Team t = requireTeam(name);
  authorize(actor, t, Action::ViewTeam);
  return t;
}

Propagation Accounts::setTeamActive(const Actor& actor, const std::string& name, bool active) {
  store::Transaction tx(store_.connection());
  const store::Team t = requireTeam(name);
  authorize(actor, t, Action::SuspendTeam);
  store_.setTeamState(t.id, active ? "active" : "suspended");
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Propagation Accounts::setTeamDryrun(const Actor& actor, const std::string& name, bool allow) {
  store::Transaction tx(store_.connection());
  const store::Team t = requireTeam(name);
  authorize(actor, t, Action::SuspendTeam);
  store_.setTeamDryrun(t.id, allow);
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

store::User Accounts::addUser(const std::string& email, const std::string& display_name) {
  const std::string e = checkEmail(email);
  if (!display_name.empty()) {
    checkName("a display name", display_name);
  }
  store::Transaction tx(store_.connection());
  if (store_.findUser(e)) {
    throw UserError("a user " + quoted(e) + " already exists");
  }
  store::User u = store_.addUser(e, display_name);
  tx.commit();
  return u;
}

Propagation Accounts::addMember(const Actor& actor, const std::string& team,
                                const std::string& email, const std::string& role) {
  const Role r = requireRole(role);
  store::Transaction tx(store_.connection());
  const store::Team t = requireTeam(team);
  authorize(actor, t, r == Role::Owner ? Action::ManageOwners : Action::ChangeRoles);
  const store::User u = requireUser(email);
  if (store_.roleOf(t.id, u.id)) {
    throw UserError(u.email + " is already a member of " + quoted(team) +
                    " (change the role with: members role)");
  }
  store_.addMember(t.id, u.id, std::string(roleName(r)));
  // A returning member's keys work again.
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Propagation Accounts::setRole(const Actor& actor, const std::string& team, const std::string& email,
                              const std::string& role) {
  const Role r = requireRole(role);
  store::Transaction tx(store_.connection());
  const Membership m = requireMember(team, email);
  const bool owners = r == Role::Owner || m.role == "owner";
  authorize(actor, m.team, owners ? Action::ManageOwners : Action::ChangeRoles);
  if (m.role == "owner" && r != Role::Owner && store_.countOwners(m.team.id) == 1) {
    throw UserError(m.user.email + " is the last owner of " + quoted(team) +
                    ": make another member owner first");
  }
  store_.setRole(m.team.id, m.user.id, std::string(roleName(r)));
  // A role that may not create keys stops the member's keys; one that may starts them again.
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

Propagation Accounts::removeMember(const Actor& actor, const std::string& team,
                                   const std::string& email) {
  store::Transaction tx(store_.connection());
  const Membership m = requireMember(team, email);
  authorize(actor, m.team, m.role == "owner" ? Action::ManageOwners : Action::ChangeRoles);
  if (m.role == "owner" && store_.countOwners(m.team.id) == 1) {
    throw UserError(m.user.email + " is the last owner of " + quoted(team) +
                    " and cannot be removed");
  }
  store_.removeMember(m.team.id, m.user.id);
  const std::int64_t seq = store_.bumpChange();  // Their keys stop working.
  tx.commit();
  return awaitGateways(seq);
}

std::vector<store::Member> Accounts::listMembers(const Actor& actor, const std::string& team) {
  const store::Team t = requireTeam(team);
  authorize(actor, t, Action::ViewTeam);
  return store_.listMembers(t.id);
}

CreatedInvite Accounts::createInvite(const Actor& actor, const std::string& team,
                                     const std::string& role,
                                     const std::optional<std::string>& email,
                                     std::chrono::milliseconds valid_for) {
  const Role r = requireRole(role);
  const std::optional<std::string> invited =
      email ? std::optional(checkEmail(*email)) : std::nullopt;
  if (valid_for <= std::chrono::milliseconds::zero()) {
    throw UserError("an invitation must be valid for some time");
  }
  store::Transaction tx(store_.connection());
  const store::Team t = requireTeam(team);
  authorize(actor, t, Action::Invite);
  if (r == Role::Owner) {
    authorize(actor, t, Action::ManageOwners);
  }
  const std::string secret = auth::randomBase62(kInviteSecretLength);
  const std::string hash = auth::toHex(auth::keyedHash(server_secret_, secret));
  store::Invite inv = store_.createInvite(t.id, std::string(roleName(r)), invited, hash,
                                          store::nowMs() + valid_for.count());
  tx.commit();
  return {std::move(inv), std::string(kInvitePrefix) + secret};
}

std::vector<store::Invite> Accounts::listInvites(const Actor& actor, const std::string& team) {
  const store::Team t = requireTeam(team);
  authorize(actor, t, Action::Invite);
  return store_.listInvites(t.id);
}

Propagation Accounts::acceptInvite(const std::string& token, const std::string& email) {
  const std::string e = checkEmail(email);
  const std::string_view t = token;
  if (!t.starts_with(kInvitePrefix) || t.size() != kInvitePrefix.size() + kInviteSecretLength) {
    throw UserError("not an invitation token");
  }
  const std::string hash =
      auth::toHex(auth::keyedHash(server_secret_, t.substr(kInvitePrefix.size())));
  store::Transaction tx(store_.connection());
  const auto inv = store_.findInviteByHash(hash);
  if (!inv) {
    throw UserError("unknown invitation");
  }
  if (inv->revoked_at) {
    throw UserError("this invitation was revoked");
  }
  if (inv->accepted_at) {
    throw UserError("this invitation was already used");
  }
  if (inv->expires_at <= store::nowMs()) {
    throw UserError("this invitation has expired");
  }
  if (inv->email && *inv->email != e) {
    throw UserError("this invitation is for another email address");
  }
  auto user = store_.findUser(e);
  if (!user) {
    user = store_.addUser(e, "");
  }
  if (store_.roleOf(inv->team_id, user->id)) {
    throw UserError(e + " is already a member of " + quoted(inv->team));
  }
  store_.addMember(inv->team_id, user->id, inv->role);
  store_.acceptInvite(inv->id, user->id);
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

void Accounts::revokeInvite(const Actor& actor, const std::string& id) {
  store::Transaction tx(store_.connection());
  const auto inv = store_.findInvite(id);
  if (!inv) {
    throw UserError("no invitation " + quoted(id));
  }
  authorize(actor, requireTeam(inv->team), Action::Invite);
  if (inv->accepted_at) {
    throw UserError("this invitation was already used");
  }
  if (!inv->revoked_at) {
    store_.revokeInvite(inv->id);
  }
  tx.commit();
}

CreatedKey Accounts::createKey(const Actor& actor, const std::string& team, const std::string& name,
                               const std::optional<std::string>& user_email) {
  checkName("a key name", name);
  store::Transaction tx(store_.connection());
  const store::Team t = requireTeam(team);
  authorize(actor, t, Action::CreateKey);
  // A user creates keys as themselves; the operator may name the user the key belongs to.
  const std::optional<std::string> owner_email = actor.email ? actor.email : user_email;
  std::optional<std::string> owner_id;
  if (owner_email) {
    const store::User u = requireUser(*owner_email);
    if (!store_.roleOf(t.id, u.id)) {
      throw UserError(u.email + " is not a member of " + quoted(team));
    }
    owner_id = u.id;
  }
  for (const store::ApiKey& k : store_.listKeys(t.id)) {
    if (k.name == name && !k.revoked_at) {
      throw UserError("team " + quoted(team) + " already has an active key named " + quoted(name));
    }
  }
  const auth::NewKey fresh = auth::generateKey();
  store::ApiKey key =
      store_.createKey(fresh.public_id, auth::toHex(auth::keyedHash(server_secret_, fresh.secret)),
                       name, t.id, owner_id);
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return {std::move(key), fresh.full, awaitGateways(seq)};
}

std::vector<store::ApiKey> Accounts::listKeys(const Actor& actor,
                                              const std::optional<std::string>& team) {
  if (!team) {
    if (actor.email) {
      throw UserError("name the team");
    }
    return store_.listKeys(std::nullopt);
  }
  const store::Team t = requireTeam(*team);
  authorize(actor, t, Action::ViewTeam);
  return store_.listKeys(t.id);
}

Propagation Accounts::revokeKey(const Actor& actor, const std::string& which) {
  std::string public_id = which;
  if (which.starts_with(auth::kKeyPrefix)) {
    const auth::ParsedKey parsed = auth::parseKey(which);
    if (parsed.shape != auth::KeyShape::Ok) {
      throw UserError("not an API key");  // Never echo what may be most of a secret.
    }
    public_id = std::string(parsed.public_id);
  } else if (!auth::isPublicId(which)) {
    throw UserError("not a key's public id: " + quoted(which));
  }
  store::Transaction tx(store_.connection());
  const auto key = store_.findKey(public_id);
  if (!key) {
    throw UserError("no key with public id " + public_id);
  }
  if (actor.email && key->created_by != actor.email) {
    authorize(actor, requireTeam(key->team), Action::RevokeAnyKey);
  } else if (actor.email) {
    authorize(actor, requireTeam(key->team), Action::ViewTeam);  // Still a member.
  }
  if (key->revoked_at) {
    throw UserError("key " + public_id + " is already revoked");
  }
  store_.revokeKey(key->id);
  const std::int64_t seq = store_.bumpChange();
  tx.commit();
  return awaitGateways(seq);
}

std::optional<CreatedKey> Accounts::bootstrap() {
  {
    store::Transaction tx(store_.connection());
    if (!store_.listTeams().empty()) {
      return std::nullopt;
    }
    try {
      store_.createTeam("default");
      tx.commit();
    } catch (const store::StoreError& e) {
      if (e.kind() != store::StoreError::Kind::Conflict) {
        throw;
      }
      return std::nullopt;  // Another gateway on the same store made it first.
    }
  }
  return createKey(Actor{}, "default", "default", std::nullopt);
}

}  // namespace tollgate::accounts
