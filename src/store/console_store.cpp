// The store's SQL for the console: sessions, one-time sign-in links, logins with an identity
// provider under way, and the audit log.
#include "store/console_store.hpp"

#include "core/ids.hpp"

namespace tollgate::store {

void ConsoleStore::createSession(const std::string& id_hash, const ConsoleSession& s,
                                 const std::string& source) {
  c_->query(
      "INSERT INTO console_sessions (id_hash, user_id, created_at, seen_at, expires_at, source) "
      "VALUES ($1, $2, $3, $4, $5, $6)",
      {id_hash, s.user_id, s.created_at, s.seen_at, s.expires_at, source});
}

std::optional<ConsoleSession> ConsoleStore::findSession(const std::string& id_hash) {
  const Rows rows = c_->query(
      "SELECT user_id, created_at, seen_at, expires_at FROM console_sessions WHERE id_hash = $1",
      {id_hash});
  if (rows.empty()) {
    return std::nullopt;
  }
  const Row& r = rows.front();
  return ConsoleSession{r.text(0), r.integer(1), r.integer(2), r.integer(3)};
}

void ConsoleStore::touchSession(const std::string& id_hash, std::int64_t at) {
  c_->query("UPDATE console_sessions SET seen_at = $1 WHERE id_hash = $2 AND seen_at < $1",
            {at, id_hash});
}

void ConsoleStore::deleteSession(const std::string& id_hash) {
  c_->query("DELETE FROM console_sessions WHERE id_hash = $1", {id_hash});
}

std::int64_t ConsoleStore::forgetEndedSignIns(std::int64_t idle_before, std::int64_t now) {
  const std::size_t sessions =
      c_->query("DELETE FROM console_sessions WHERE seen_at < $1 OR expires_at <= $2 RETURNING 1",
                {idle_before, now})
          .size();
  const std::size_t links =
      c_->query("DELETE FROM login_links WHERE expires_at <= $1 OR used_at IS NOT NULL RETURNING 1",
                {now})
          .size();
  return static_cast<std::int64_t>(sessions + links);
}

std::int64_t ConsoleStore::deleteSessionsOf(const std::string& user_id) {
  return static_cast<std::int64_t>(
      c_->query("DELETE FROM console_sessions WHERE user_id = $1 RETURNING 1", {user_id}).size());
}

std::optional<std::string> ConsoleStore::userOfIdentity(const std::string& issuer,
                                                        const std::string& subject) {
  const Rows rows = c_->query(
      "SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2", {issuer, subject});
  return rows.empty() ? std::nullopt : std::optional(rows.front().text(0));
}

std::optional<std::string> ConsoleStore::identityAt(const std::string& user_id,
                                                    const std::string& issuer) {
  const Rows rows = c_->query(
      "SELECT subject FROM user_identities WHERE user_id = $1 AND issuer = $2", {user_id, issuer});
  return rows.empty() ? std::nullopt : std::optional(rows.front().text(0));
}

void ConsoleStore::bindIdentity(const std::string& issuer, const std::string& subject,
                                const std::string& user_id) {
  c_->query(
      "INSERT INTO user_identities (issuer, subject, user_id, created_at) VALUES ($1, $2, $3, $4)",
      {issuer, subject, user_id, nowMs()});
}

std::int64_t ConsoleStore::unbindIdentities(const std::string& user_id) {
  return static_cast<std::int64_t>(
      c_->query("DELETE FROM user_identities WHERE user_id = $1 RETURNING 1", {user_id}).size());
}

bool ConsoleStore::liveLoginLink(const std::string& token_hash, std::int64_t now) {
  return !c_->query(
                "SELECT 1 FROM login_links WHERE token_hash = $1 AND used_at IS NULL AND "
                "expires_at > $2",
                {token_hash, now})
              .empty();
}

void ConsoleStore::createLoginLink(const std::string& token_hash, const std::string& user_id,
                                   std::int64_t expires_at) {
  c_->query(
      "INSERT INTO login_links (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, "
      "$4)",
      {token_hash, user_id, nowMs(), expires_at});
}

std::optional<std::string> ConsoleStore::useLoginLink(const std::string& token_hash,
                                                      std::int64_t now) {
  const Rows rows = c_->query(
      "UPDATE login_links SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL AND "
      "expires_at > $1 RETURNING user_id",
      {now, token_hash});
  return rows.empty() ? std::nullopt : std::optional(rows.front().text(0));
}

void ConsoleStore::appendAudit(const AuditEntry& e) {
  c_->query(
      "INSERT INTO audit_log (id, at, actor, team_id, action, target, source) VALUES ($1, $2, $3, "
      "$4, $5, $6, $7)",
      {e.id.empty() ? ids::uuidV7() : e.id, e.at != 0 ? e.at : nowMs(), e.actor,
       e.team_id.empty() ? Param() : Param(e.team_id), e.action, e.target, e.source});
}

std::int64_t ConsoleStore::pruneAudit(std::int64_t before_ms) {
  return static_cast<std::int64_t>(
      c_->query("DELETE FROM audit_log WHERE at < $1 RETURNING 1", {before_ms}).size());
}

std::vector<AuditEntry> ConsoleStore::listAudit(const AuditFilter& f) {
  std::string sql =
      "SELECT a.id, a.at, a.actor, a.team_id, t.name, a.action, a.target, a.source FROM audit_log "
      "a LEFT JOIN teams t ON t.id = a.team_id WHERE 1 = 1";
  std::vector<Param> params;
  if (f.team_id) {
    params.emplace_back(*f.team_id);
    sql += " AND a.team_id = $" + std::to_string(params.size());
  }
  if (f.before_id) {
    params.emplace_back(*f.before_id);
    sql += " AND a.id < $" + std::to_string(params.size());
  }
  params.emplace_back(f.limit);
  sql += " ORDER BY a.id DESC LIMIT $" + std::to_string(params.size());
  std::vector<AuditEntry> out;
  for (const Row& r : c_->query(sql, params)) {
    out.push_back({r.text(0), r.integer(1), r.text(2), r.text(3), r.text(4), r.text(5), r.text(6),
                   r.text(7)});
  }
  return out;
}

}  // namespace tollgate::store
