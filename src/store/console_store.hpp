// The store's part of the console: sessions, sign-in links, users' bindings to identity
// providers, and the audit log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/connection.hpp"

namespace tollgate::store {

/// A signed-in console user's session: only a keyed hash of its id is stored.
struct ConsoleSession {
  std::string user_id;
  std::int64_t created_at = 0;
  std::int64_t seen_at = 0;     ///< Last use (moved at most about once a minute).
  std::int64_t expires_at = 0;  ///< The absolute end.
};

/// One change, as the audit log keeps it.
struct AuditEntry {
  std::string id = {};  ///< UUIDv7: ordered by time.
  std::int64_t at = 0;
  std::string actor = {};    ///< A user's email, or "operator".
  std::string team_id = {};  ///< Empty when the change concerns no team (a sign-in).
  std::string team = {};     ///< Read only.
  std::string action = {};   ///< e.g. "key.created", "member.removed", "signin.failed".
  std::string target = {};  ///< What it was done to: a key's public id, an email, an invitation id.
  std::string source = {};  ///< The client's address, or "cli".
};

struct AuditFilter {
  std::optional<std::string> team_id;
  std::optional<std::string> before_id;  ///< Only entries older than this one (paging).
  std::int64_t limit = 100;
};

/// The console's sign-ins and the audit log, in the caller's transaction.
class ConsoleStore {
 public:
  explicit ConsoleStore(Connection& c) : c_(&c) {}

  // Sessions and one-time sign-in links.
  void createSession(const std::string& id_hash, const ConsoleSession& s,
                     const std::string& source);
  std::optional<ConsoleSession> findSession(const std::string& id_hash);
  void touchSession(const std::string& id_hash, std::int64_t at);
  void deleteSession(const std::string& id_hash);
  /// Ends every session of `user_id`; how many.
  std::int64_t deleteSessionsOf(const std::string& user_id);
  /// Forgets what of signing in has ended: sessions idle since before `idle_before` or expired
  /// by `now`, and sign-in links used or expired by `now`; returns how many rows.
  std::int64_t forgetEndedSignIns(std::int64_t idle_before, std::int64_t now);
  void createLoginLink(const std::string& token_hash, const std::string& user_id,
                       std::int64_t expires_at);
  /// Whether a link with this hash exists, unused and unexpired (a read: no lock is taken).
  bool liveLoginLink(const std::string& token_hash, std::int64_t now);
  /// Marks an unused, unexpired link used; its user, or nullopt (unknown, used or expired).
  std::optional<std::string> useLoginLink(const std::string& token_hash, std::int64_t now);
  // Users' bindings to identity providers.
  /// The user bound to `subject` at the identity provider `issuer`, if any.
  std::optional<std::string> userOfIdentity(const std::string& issuer, const std::string& subject);
  /// The subject `user_id` is bound to at `issuer`, if any.
  std::optional<std::string> identityAt(const std::string& user_id, const std::string& issuer);
  /// Binds `user_id` to (`issuer`, `subject`); throws Conflict when either side is bound.
  void bindIdentity(const std::string& issuer, const std::string& subject,
                    const std::string& user_id);
  /// Forgets every identity-provider binding of `user_id`; how many.
  std::int64_t unbindIdentities(const std::string& user_id);
  // The audit log.
  void appendAudit(const AuditEntry& e);
  std::vector<AuditEntry> listAudit(const AuditFilter& f);
  /// Deletes audit rows older than `before_ms`; returns how many.
  std::int64_t pruneAudit(std::int64_t before_ms);

 private:
  Connection* c_;
};

}  // namespace tollgate::store
