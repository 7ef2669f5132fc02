// The store's SQL for teams, users, memberships, invitations, keys and the change sequence.
#include "store/accounts_store.hpp"

#include "core/ids.hpp"
#include "core/unicode.hpp"

namespace tollgate::store {
namespace {

/// Rate limits from their rpm, tpm and concurrent columns, from `at`.
key_rules::RateLimits rateLimits(const Row& r, std::size_t at) {
  return {r.optionalInteger(at), r.optionalInteger(at + 1), r.optionalInteger(at + 2)};
}

constexpr std::string_view kTeamColumns =
    "SELECT id, name, state, created_at, balance, reserved, allow_dryrun, rpm, tpm, concurrent "
    "FROM teams ";

Team team(const Row& r) {
  return {r.text(0),    r.text(1),    r.text(2),         r.integer(3),
          r.integer(4), r.integer(5), r.integer(6) != 0, rateLimits(r, 7)};
}
User user(const Row& r, std::size_t at = 0) {
  return {r.text(at), r.text(at + 1), r.text(at + 2), r.integer(at + 3)};
}

constexpr std::string_view kInviteColumns =
    "SELECT i.id, i.team_id, t.name, i.role, i.email, i.created_at, i.expires_at, "
    "i.accepted_at, u.email, i.revoked_at, i.created_by FROM invites i JOIN teams t ON t.id = "
    "i.team_id "
    "LEFT JOIN users u ON u.id = i.accepted_by ";

Invite invite(const Row& r) {
  return {r.text(0),         r.text(1),
          r.text(2),         r.text(3),
          r.optionalText(4), r.integer(5),
          r.integer(6),      r.optionalInteger(7),
          r.optionalText(8), r.optionalInteger(9),
          r.optionalText(10)};
}

constexpr std::string_view kKeyColumns =
    "SELECT k.id, k.public_id, k.secret_hash, k.name, k.team_id, t.name, u.email, k.created_at, "
    "k.last_used_at, k.revoked_at, k.expires_at, k.allowed_models, k.rpm, k.tpm, k.concurrent, "
    "k.budget, k.budget_window FROM api_keys k JOIN teams t "
    "ON t.id = k.team_id "
    "LEFT JOIN users u ON u.id = k.created_by ";

/// A key's budget from its budget and budget_window columns, from `at`.
std::optional<key_rules::Budget> budgetOf(const Row& r, std::size_t at) {
  const std::optional<std::int64_t> pico = r.optionalInteger(at);
  if (!pico) {
    return std::nullopt;
  }
  // Only this code writes the window; one it cannot read is the shortest, never the longest.
  return key_rules::Budget{*pico, key_rules::parseBudgetWindow(r.optionalText(at + 1).value_or(""))
                                      .value_or(key_rules::BudgetWindow::Day)};
}

/// A key's rules from its expires_at, allowed_models, rpm, tpm, concurrent, budget and
/// budget_window columns, from `at`.
key_rules::KeyRules keyRules(const Row& r, std::size_t at) {
  const std::optional<std::string> models = r.optionalText(at + 1);
  // Only this code writes the column; a list it cannot read allows nothing rather than all.
  return {r.optionalInteger(at),
          models
              ? std::optional(key_rules::decodeModels(*models).value_or(std::vector<std::string>{}))
              : std::nullopt,
          rateLimits(r, at + 2), budgetOf(r, at + 5)};
}

Param budgetParam(const key_rules::KeyRules& rules) {
  return rules.budget ? Param(rules.budget->pico_usd) : Param();
}

Param budgetWindowParam(const key_rules::KeyRules& rules) {
  return rules.budget ? Param(std::string(key_rules::budgetWindowName(rules.budget->window)))
                      : Param();
}

Param countParam(const std::optional<std::int64_t>& v) { return v ? Param(*v) : Param(); }

Param expiresParam(const key_rules::KeyRules& rules) {
  return rules.expires_at ? Param(*rules.expires_at) : Param();
}

Param modelsParam(const key_rules::KeyRules& rules) {
  return rules.allowed_models ? Param(key_rules::encodeModels(*rules.allowed_models)) : Param();
}

ApiKey apiKey(const Row& r) {
  return {r.text(0),
          r.text(1),
          r.text(2),
          r.text(3),
          r.text(4),
          r.text(5),
          r.optionalText(6),
          r.integer(7),
          r.optionalInteger(8),
          r.optionalInteger(9),
          keyRules(r, 10),
          std::nullopt};
}

std::string q(std::string_view head, std::string_view tail) {
  return std::string(head) + std::string(tail);
}

}  // namespace

Team AccountsStore::createTeam(const std::string& name) {
  Team t{ids::uuidV7(), name, "active", nowMs(), 0, 0, true, {}};
  c_->query(
      "INSERT INTO teams (id, name, state, created_at, name_skeleton) VALUES ($1, $2, $3, $4, $5)",
      {t.id, t.name, t.state, t.created_at, unicode::skeleton(name)});
  return t;
}

std::vector<Team> AccountsStore::listTeams() {
  std::vector<Team> out;
  for (const Row& r : c_->query(q(kTeamColumns, "ORDER BY name"))) {
    out.push_back(team(r));
  }
  return out;
}

std::optional<Team> AccountsStore::findTeam(const std::string& name) {
  const Rows rows = c_->query(q(kTeamColumns, "WHERE name = $1"), {name});
  return rows.empty() ? std::nullopt : std::optional(team(rows.front()));
}

std::optional<Team> AccountsStore::findLookAlikeTeam(const std::string& name) {
  const Rows rows =
      c_->query(q(kTeamColumns, "WHERE name_skeleton = $1"), {unicode::skeleton(name)});
  return rows.empty() ? std::nullopt : std::optional(team(rows.front()));
}

std::optional<Team> AccountsStore::findTeamById(const std::string& id) {
  const Rows rows = c_->query(q(kTeamColumns, "WHERE id = $1"), {id});
  return rows.empty() ? std::nullopt : std::optional(team(rows.front()));
}

void AccountsStore::setTeamState(const std::string& team_id, const std::string& state) {
  c_->query("UPDATE teams SET state = $1 WHERE id = $2", {state, team_id});
}

void AccountsStore::setTeamDryrun(const std::string& team_id, bool allow) {
  c_->query("UPDATE teams SET allow_dryrun = $1 WHERE id = $2",
            {std::int64_t{allow ? 1 : 0}, team_id});
}

User AccountsStore::addUser(const std::string& email, const std::string& name) {
  User u{ids::uuidV7(), email, name, nowMs()};
  c_->query("INSERT INTO users (id, email, name, created_at) VALUES ($1, $2, $3, $4)",
            {u.id, u.email, u.name, u.created_at});
  return u;
}

std::optional<User> AccountsStore::findUser(const std::string& email) {
  const Rows rows =
      c_->query("SELECT id, email, name, created_at FROM users WHERE email = $1", {email});
  return rows.empty() ? std::nullopt : std::optional(user(rows.front()));
}

std::optional<User> AccountsStore::findUserById(const std::string& id) {
  const Rows rows = c_->query("SELECT id, email, name, created_at FROM users WHERE id = $1", {id});
  return rows.empty() ? std::nullopt : std::optional(user(rows.front()));
}

std::optional<std::string> AccountsStore::roleOf(const std::string& team_id,
                                                 const std::string& user_id) {
  const Rows rows =
      c_->query("SELECT role FROM members WHERE team_id = $1 AND user_id = $2", {team_id, user_id});
  return rows.empty() ? std::nullopt : std::optional(rows.front().text(0));
}

std::vector<std::pair<Team, std::string>> AccountsStore::teamsOf(const std::string& user_id) {
  std::vector<std::pair<Team, std::string>> out;
  for (const Row& r :
       c_->query("SELECT t.id, t.name, t.state, t.created_at, t.balance, "
                 "t.reserved, t.allow_dryrun, t.rpm, t.tpm, t.concurrent, m.role FROM members m "
                 "JOIN teams t ON "
                 "t.id = m.team_id WHERE m.user_id = $1 ORDER BY t.name",
                 {user_id})) {
    out.emplace_back(team(r), r.text(10));
  }
  return out;
}

void AccountsStore::addMember(const std::string& team_id, const std::string& user_id,
                              const std::string& role) {
  c_->query("INSERT INTO members (team_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)",
            {team_id, user_id, role, nowMs()});
}

void AccountsStore::setRole(const std::string& team_id, const std::string& user_id,
                            const std::string& role) {
  c_->query("UPDATE members SET role = $1 WHERE team_id = $2 AND user_id = $3",
            {role, team_id, user_id});
}

void AccountsStore::removeMember(const std::string& team_id, const std::string& user_id) {
  c_->query("DELETE FROM members WHERE team_id = $1 AND user_id = $2", {team_id, user_id});
}

std::vector<Member> AccountsStore::listMembers(const std::string& team_id) {
  std::vector<Member> out;
  for (const Row& r :
       c_->query("SELECT u.id, u.email, u.name, u.created_at, m.role, m.created_at FROM members m "
                 "JOIN users u ON u.id = m.user_id WHERE m.team_id = $1 ORDER BY u.email",
                 {team_id})) {
    out.push_back({user(r), r.text(4), r.integer(5)});
  }
  return out;
}

std::int64_t AccountsStore::countOwners(const std::string& team_id) {
  return c_->query("SELECT COUNT(*) FROM members WHERE team_id = $1 AND role = 'owner'", {team_id})
      .at(0)
      .integer(0);
}

Invite AccountsStore::createInvite(const std::string& team_id, const std::string& role,
                                   const std::optional<std::string>& email,
                                   const std::string& token_hash, std::int64_t expires_at,
                                   const std::optional<std::string>& created_by) {
  const std::string id = ids::uuidV7();
  c_->query(
      "INSERT INTO invites (id, team_id, role, email, token_hash, created_at, expires_at, "
      "created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
      {id, team_id, role, email, token_hash, nowMs(), expires_at, created_by});
  return *findInvite(id);
}

std::vector<Invite> AccountsStore::listInvites(const std::string& team_id) {
  std::vector<Invite> out;
  for (const Row& r : c_->query(
           q(kInviteColumns, "WHERE i.team_id = $1 ORDER BY i.created_at, i.id"), {team_id})) {
    out.push_back(invite(r));
  }
  return out;
}

std::optional<Invite> AccountsStore::findInviteByHash(const std::string& token_hash) {
  const Rows rows = c_->query(q(kInviteColumns, "WHERE i.token_hash = $1"), {token_hash});
  return rows.empty() ? std::nullopt : std::optional(invite(rows.front()));
}

std::optional<Invite> AccountsStore::findInvite(const std::string& id) {
  const Rows rows = c_->query(q(kInviteColumns, "WHERE i.id = $1"), {id});
  return rows.empty() ? std::nullopt : std::optional(invite(rows.front()));
}

bool AccountsStore::acceptInvite(const std::string& id, const std::string& user_id) {
  return !c_->query(
                "UPDATE invites SET accepted_at = $1, accepted_by = $2 WHERE id = $3 AND "
                "accepted_at IS NULL AND revoked_at IS NULL AND expires_at > $1 RETURNING id",
                {nowMs(), user_id, id})
              .empty();
}

void AccountsStore::lockTeam(const std::string& team_id) {
  if (c_->engine() == Engine::Postgres) {
    c_->query("SELECT id FROM teams WHERE id = $1 FOR UPDATE", {team_id});
  }
}

void AccountsStore::revokeInvite(const std::string& id) {
  c_->query("UPDATE invites SET revoked_at = $1 WHERE id = $2", {nowMs(), id});
}

ApiKey AccountsStore::createKey(const std::string& public_id, const std::string& secret_hash,
                                const std::string& name, const std::string& team_id,
                                const std::optional<std::string>& created_by_user_id,
                                const key_rules::KeyRules& rules) {
  const std::string id = ids::uuidV7();
  c_->query(
      "INSERT INTO api_keys (id, public_id, secret_hash, name, team_id, created_by, created_at, "
      "name_skeleton, expires_at, allowed_models, rpm, tpm, concurrent, budget, budget_window) "
      "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
      {id, public_id, secret_hash, name, team_id, created_by_user_id, nowMs(),
       unicode::skeleton(name), expiresParam(rules), modelsParam(rules),
       countParam(rules.limits.rpm), countParam(rules.limits.tpm),
       countParam(rules.limits.concurrent), budgetParam(rules), budgetWindowParam(rules)});
  return *findKey(public_id);
}

std::vector<ApiKey> AccountsStore::listKeys(const std::optional<std::string>& team_id) {
  std::vector<ApiKey> out;
  const Rows rows =
      team_id ? c_->query(q(kKeyColumns, "WHERE k.team_id = $1 ORDER BY k.created_at, k.id"),
                          {*team_id})
              : c_->query(q(kKeyColumns, "ORDER BY t.name, k.created_at, k.id"));
  const std::int64_t now = nowMs();
  for (const Row& r : rows) {
    ApiKey& k = out.emplace_back(apiKey(r));
    if (k.rules.budget) {
      // What the settlements added to its spend in the window now current (key_spend).
      const std::int64_t start = key_rules::budgetWindowAt(k.rules.budget->window, now).first;
      const Rows spent =
          c_->query("SELECT spent FROM key_spend WHERE key_public_id = $1 AND window_start = $2",
                    {k.public_id, start});
      k.budget_spent = spent.empty() ? 0 : spent.front().integer(0);
    }
  }
  return out;
}

std::optional<ApiKey> AccountsStore::findKey(const std::string& public_id) {
  const Rows rows = c_->query(q(kKeyColumns, "WHERE k.public_id = $1"), {public_id});
  return rows.empty() ? std::nullopt : std::optional(apiKey(rows.front()));
}

void AccountsStore::revokeKey(const std::string& id) {
  c_->query("UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL",
            {nowMs(), id});
}

void AccountsStore::setKeyRules(const std::string& id, const key_rules::KeyRules& rules) {
  c_->query(
      "UPDATE api_keys SET expires_at = $1, allowed_models = $2, rpm = $3, tpm = $4, "
      "concurrent = $5, budget = $6, budget_window = $7 WHERE id = $8",
      {expiresParam(rules), modelsParam(rules), countParam(rules.limits.rpm),
       countParam(rules.limits.tpm), countParam(rules.limits.concurrent), budgetParam(rules),
       budgetWindowParam(rules), id});
}

void AccountsStore::setTeamLimits(const std::string& team_id, const key_rules::RateLimits& l) {
  c_->query("UPDATE teams SET rpm = $1, tpm = $2, concurrent = $3 WHERE id = $4",
            {countParam(l.rpm), countParam(l.tpm), countParam(l.concurrent), team_id});
}

key_rules::RateLimits AccountsStore::teamLimits(const std::string& team_id) {
  const Rows rows = c_->query("SELECT rpm, tpm, concurrent FROM teams WHERE id = $1", {team_id});
  return rows.empty() ? key_rules::RateLimits{} : rateLimits(rows.front(), 0);
}

std::vector<KeyGrant> AccountsStore::loadGrants(const std::vector<std::string>& key_roles) {
  // A key authorizes inference while its creator is a member whose role may create keys.
  std::string roles;  // $1, $2, …
  std::vector<Param> params;
  for (const std::string& role : key_roles) {
    params.emplace_back(role);
    roles += (roles.empty() ? "$" : ", $") + std::to_string(params.size());
  }
  if (roles.empty()) {
    roles = "NULL";  // IN (NULL) matches nothing.
  }
  const std::string sql =
      "SELECT k.public_id, k.secret_hash, k.team_id, t.name, k.revoked_at IS NOT NULL, "
      "t.state = 'active', k.created_by IS NULL OR EXISTS (SELECT 1 FROM members m WHERE "
      "m.team_id = k.team_id AND m.user_id = k.created_by AND m.role IN (" +
      roles +
      ")), t.allow_dryrun = 1, k.created_by, k.expires_at, k.allowed_models, k.rpm, k.tpm, "
      "k.concurrent, k.budget, k.budget_window, t.rpm, t.tpm, t.concurrent FROM api_keys k JOIN "
      "teams t ON t.id = k.team_id";
  std::vector<KeyGrant> out;
  for (const Row& r : c_->query(sql, params)) {
    // Booleans come back as 1/0 (SQLite) or t/f (PostgreSQL).
    const auto flag = [&](std::size_t i) { return r.text(i) == "1" || r.text(i) == "t"; };
    out.push_back({r.text(0), r.text(1), r.text(2), r.text(3), flag(4), flag(5), flag(6), flag(7),
                   r.text(8), keyRules(r, 9), rateLimits(r, 16)});
  }
  return out;
}

void AccountsStore::touchKeys(
    const std::vector<std::pair<std::string, std::int64_t>>& public_id_at) {
  for (const auto& [public_id, at] : public_id_at) {
    c_->query(
        "UPDATE api_keys SET last_used_at = $1 WHERE public_id = $2 AND "
        "(last_used_at IS NULL OR last_used_at < $1)",
        {at, public_id});
  }
}

std::int64_t AccountsStore::bumpChange() {
  c_->announceChange();
  return c_->query("UPDATE changes SET seq = seq + 1 WHERE id = 1 RETURNING seq").at(0).integer(0);
}

std::int64_t AccountsStore::changeSeq() {
  return c_->query("SELECT seq FROM changes WHERE id = 1").at(0).integer(0);
}

std::int64_t AccountsStore::lockedChangeSeq() {
  const bool postgres = c_->engine() == Engine::Postgres;
  return c_
      ->query(postgres ? "SELECT seq FROM changes WHERE id = 1 FOR SHARE"
                       : "SELECT seq FROM changes WHERE id = 1")
      .at(0)
      .integer(0);
}

}  // namespace tollgate::store
