#include "store/migrations.hpp"

#include <array>
#include <set>
#include <utility>

#include "core/ids.hpp"
#include "core/unicode.hpp"
#include "store/connection.hpp"

namespace tollgate::store {
namespace {

// Times are milliseconds since the Unix epoch; ids are UUIDv7 text made by the application,
// so the same statements serve both engines.
constexpr std::string_view kV1 = R"sql(
CREATE TABLE teams (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('active', 'suspended')),
  created_at BIGINT NOT NULL
);
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE TABLE members (
  team_id TEXT NOT NULL REFERENCES teams (id),
  user_id TEXT NOT NULL REFERENCES users (id),
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  created_at BIGINT NOT NULL,
  PRIMARY KEY (team_id, user_id)
);
CREATE TABLE invites (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id),
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member', 'viewer')),
  email TEXT,
  token_hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  accepted_at BIGINT,
  accepted_by TEXT REFERENCES users (id),
  revoked_at BIGINT
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  public_id TEXT NOT NULL UNIQUE,
  secret_hash TEXT NOT NULL,
  name TEXT NOT NULL,
  team_id TEXT NOT NULL REFERENCES teams (id),
  created_by TEXT REFERENCES users (id),
  created_at BIGINT NOT NULL,
  last_used_at BIGINT,
  revoked_at BIGINT
);
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (team_id, name) WHERE revoked_at IS NULL;
CREATE TABLE changes (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  seq BIGINT NOT NULL
);
INSERT INTO changes (id, seq) VALUES (1, 0);
CREATE TABLE gateways (
  id TEXT PRIMARY KEY,
  host TEXT NOT NULL,
  pid BIGINT NOT NULL,
  started_at BIGINT NOT NULL,
  seen_at BIGINT NOT NULL,
  applied_seq BIGINT NOT NULL
);
)sql";

// Money is pico-USD in BIGINT. A hold is the part of a team's balance one gateway has reserved
// (`reserved` is their sum); the spend log keeps one row per billed request (its tags as a JSON
// object), with as few indexes as its queries need (every row written is pages written before a
// response may complete), and daily per-team aggregates written with each row so that summaries
// never scan raw rows (which a retention setting may prune).
constexpr std::string_view kV2 = R"sql(
ALTER TABLE teams ADD COLUMN balance BIGINT NOT NULL DEFAULT 0;
ALTER TABLE teams ADD COLUMN reserved BIGINT NOT NULL DEFAULT 0;
CREATE TABLE holds (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id),
  gateway_id TEXT NOT NULL,
  amount BIGINT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX holds_gateway ON holds (gateway_id);
CREATE TABLE spend (
  request_id TEXT PRIMARY KEY,
  created_at BIGINT NOT NULL,
  team_id TEXT NOT NULL REFERENCES teams (id),
  key_public_id TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  variant TEXT NOT NULL,
  episode_id TEXT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  cost BIGINT NOT NULL,
  tags TEXT NOT NULL,
  status BIGINT NOT NULL,
  upstream_ms BIGINT NOT NULL,
  streamed BIGINT NOT NULL,
  estimated BIGINT NOT NULL,
  cache_hit BIGINT NOT NULL
);
CREATE INDEX spend_team_time ON spend (team_id, created_at);
CREATE TABLE spend_daily (
  team_id TEXT NOT NULL REFERENCES teams (id),
  day TEXT NOT NULL,
  model TEXT NOT NULL,
  key_public_id TEXT NOT NULL,
  requests BIGINT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (team_id, day, model, key_public_id)
);
CREATE TABLE spend_daily_tags (
  team_id TEXT NOT NULL REFERENCES teams (id),
  day TEXT NOT NULL,
  tag TEXT NOT NULL,
  value TEXT NOT NULL,
  requests BIGINT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (team_id, day, tag, value)
);
)sql";

// Whether a team's keys may send tollgate::dryrun requests (1) or not (0).
constexpr std::string_view kV3 = R"sql(
ALTER TABLE teams ADD COLUMN allow_dryrun BIGINT NOT NULL DEFAULT 1;
)sql";

// What a settlement could not collect: its hold was reclaimed from a gateway taken for dead, and
// the team's balance no longer covered the answer it had already delivered.
constexpr std::string_view kV4 = R"sql(
ALTER TABLE spend ADD COLUMN uncollected BIGINT NOT NULL DEFAULT 0;
)sql";

// The console: sessions and one-time sign-in links (only keyed hashes of their secrets), logins
// under way with an identity provider (each used once), the audit log of every change, and the
// user a billed request was made by (the playground's signed-in user, or a key's creator), with
// daily per-user aggregates ('' is no user, and is not aggregated).
constexpr std::string_view kV5 = R"sql(
CREATE TABLE console_sessions (
  id_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id),
  created_at BIGINT NOT NULL,
  seen_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  source TEXT NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE TABLE login_links (
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users (id),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE TABLE oidc_logins (
  state_hash TEXT PRIMARY KEY,
  nonce TEXT NOT NULL,
  code_verifier TEXT NOT NULL,
  return_to TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE TABLE audit_log (
  id TEXT PRIMARY KEY,
  at BIGINT NOT NULL,
  actor TEXT NOT NULL,
  team_id TEXT REFERENCES teams (id),
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  source TEXT NOT NULL
);
CREATE INDEX audit_log_team ON audit_log (team_id, id);
ALTER TABLE spend ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
CREATE TABLE spend_daily_users (
  team_id TEXT NOT NULL REFERENCES teams (id),
  day TEXT NOT NULL,
  user_id TEXT NOT NULL,
  requests BIGINT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  cost BIGINT NOT NULL,
  PRIMARY KEY (team_id, day, user_id)
);
)sql";

// A client's Idempotency-Key, per team: the attempt that claimed it (running), then what the
// charged request sent, which a retry gets again (completed; the answer is not kept for a model
// that must not store it). The inference cache: answers by a digest of their request, per team.
// Bodies are any bytes, stored as base64; `bytes` is a cached body's decoded size.
constexpr std::string_view kV6 = R"sql(
CREATE TABLE idempotency_keys (
  team_id TEXT NOT NULL,
  key TEXT NOT NULL,
  digest TEXT NOT NULL,
  claim_id TEXT NOT NULL,
  gateway_id TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'completed')),
  created_at BIGINT NOT NULL,
  completed_at BIGINT,
  request_id TEXT,
  status BIGINT,
  content_type TEXT,
  streamed BIGINT,
  kept BIGINT,
  body TEXT,
  PRIMARY KEY (team_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
CREATE TABLE inference_cache (
  team_id TEXT NOT NULL,
  key TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  bytes BIGINT NOT NULL,
  prompt_tokens BIGINT NOT NULL,
  completion_tokens BIGINT NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (team_id, key)
);
CREATE INDEX inference_cache_team_time ON inference_cache (team_id, created_at);
)sql";

// Console users bound to their identity provider's (issuer, subject), not to an email alone; an
// invitation's maker (NULL: the operator's), filled from the audit log, and open invitations whose
// maker left the team revoked (revokeOrphanInvitations); sign-ins with the provider under way
// travel sealed in the browser's cookie, not in a table; audit rows pruned by time.
constexpr std::string_view kV7 = R"sql(
CREATE TABLE user_identities (
  issuer TEXT NOT NULL,
  subject TEXT NOT NULL,
  user_id TEXT NOT NULL REFERENCES users (id),
  created_at BIGINT NOT NULL,
  PRIMARY KEY (issuer, subject)
);
CREATE UNIQUE INDEX user_identities_user ON user_identities (user_id, issuer);
DROP TABLE oidc_logins;
CREATE INDEX audit_log_at ON audit_log (at);
ALTER TABLE invites ADD COLUMN created_by TEXT REFERENCES users (id);
UPDATE invites SET created_by = (
  SELECT u.id FROM audit_log a JOIN users u ON u.email = a.actor
  WHERE a.action = 'invitation.created' AND a.target LIKE invites.id || ' (%'
  ORDER BY a.id LIMIT 1);
)sql";

/// Migration 7's step in C++: an open invitation made by a user (its audit row says so) who is
/// no longer a member of its team is revoked, and the revocation audited (actor "migration").
void revokeOrphanInvitations(Connection& c) {
  const std::int64_t now = nowMs();
  const Rows orphans = c.query(
      "SELECT i.id, i.team_id FROM invites i WHERE i.accepted_at IS NULL AND i.revoked_at IS "
      "NULL AND i.expires_at > $1 AND EXISTS (SELECT 1 FROM audit_log a WHERE a.action = "
      "'invitation.created' AND a.target LIKE i.id || ' (%' AND a.actor <> 'operator') AND NOT "
      "EXISTS (SELECT 1 FROM members m WHERE m.team_id = i.team_id AND m.user_id = i.created_by)",
      {now});
  for (const Row& r : orphans) {
    c.query("UPDATE invites SET revoked_at = $1 WHERE id = $2", {now, r.text(0)});
    c.query(
        "INSERT INTO audit_log (id, at, actor, team_id, action, target, source) VALUES ($1, $2, "
        "'migration', $3, 'invitation.revoked', $4, 'migration')",
        {ids::uuidV7(), now, r.text(1), r.text(0) + " (its maker is no longer a member)"});
  }
}

// What a team's Idempotency-Key answers take, apart from its cached answers: each record's
// `bytes` (its kept body's decoded size; 0 when none is kept) and each team's sum of them, kept
// up to date by every statement that keeps, prunes or takes over a record. `kept` is 2 for an
// answer not kept because the team's sum was at its bound. Bodies kept before are counted by
// their stored size, at least their decoded one (and subtracted as counted).
constexpr std::string_view kV8 = R"sql(
ALTER TABLE idempotency_keys ADD COLUMN bytes BIGINT NOT NULL DEFAULT 0;
UPDATE idempotency_keys SET bytes = LENGTH(body) WHERE kept = 1;
CREATE TABLE idempotency_bytes (
  team_id TEXT PRIMARY KEY,
  bytes BIGINT NOT NULL
);
INSERT INTO idempotency_bytes (team_id, bytes)
  SELECT team_id, SUM(bytes) FROM idempotency_keys GROUP BY team_id;
)sql";

// The UTS #39 skeletons of team and key names (see fillNameSkeletons), unique among teams and
// among a team's active keys; a NULL skeleton (a name kept that looks like an earlier one) is
// distinct from every other in both engines' unique indexes.
constexpr std::string_view kV9 = R"sql(
ALTER TABLE teams ADD COLUMN name_skeleton TEXT;
ALTER TABLE api_keys ADD COLUMN name_skeleton TEXT;
)sql";
constexpr std::string_view kV9Indexes = R"sql(
CREATE UNIQUE INDEX teams_name_skeleton ON teams (name_skeleton);
CREATE UNIQUE INDEX api_keys_active_skeleton ON api_keys (team_id, name_skeleton)
  WHERE revoked_at IS NULL;
)sql";

/// Gives every team and key its name's skeleton, in the order they were made: a team whose name
/// looks like an earlier team's, or an active key whose name looks like an earlier active key's
/// of its team, keeps a NULL skeleton (it goes on working; lookAlikes() lists it).
void fillNameSkeletons(Connection& c) {
  std::set<std::string> teams;
  for (const Row& r : c.query("SELECT id, name FROM teams ORDER BY created_at, id")) {
    std::string skeleton = unicode::skeleton(r.text(1));
    if (teams.insert(skeleton).second) {
      c.query("UPDATE teams SET name_skeleton = $1 WHERE id = $2", {skeleton, r.text(0)});
    }
  }
  std::set<std::pair<std::string, std::string>> active;
  for (const Row& r :
       c.query("SELECT id, team_id, name, revoked_at FROM api_keys ORDER BY created_at, id")) {
    std::string skeleton = unicode::skeleton(r.text(2));
    if (!r.isNull(3) || active.emplace(r.text(1), skeleton).second) {
      c.query("UPDATE api_keys SET name_skeleton = $1 WHERE id = $2", {skeleton, r.text(0)});
    }
  }
}

/// The names fillNameSkeletons() left without a skeleton, each with the name it looks like.
std::vector<std::string> lookAlikes(Connection& c) {
  const auto shown = [](const std::string& name) {
    return "\"" + unicode::visible(name, 200) + "\"";
  };
  std::vector<std::string> out;
  for (const Row& r : c.query("SELECT name FROM teams WHERE name_skeleton IS NULL ORDER BY name")) {
    const Rows like =
        c.query("SELECT name FROM teams WHERE name_skeleton = $1", {unicode::skeleton(r.text(0))});
    if (!like.empty()) {
      out.push_back("team " + shown(r.text(0)) + " looks like team " + shown(like[0].text(0)));
    }
  }
  for (const Row& r :
       c.query("SELECT k.name, k.team_id, t.name, k.public_id FROM api_keys k JOIN teams t ON "
               "t.id = k.team_id WHERE k.name_skeleton IS NULL AND k.revoked_at IS NULL "
               "ORDER BY t.name, k.name")) {
    const Rows like = c.query(
        "SELECT name FROM api_keys WHERE team_id = $1 AND name_skeleton = $2 AND "
        "revoked_at IS NULL",
        {r.text(1), unicode::skeleton(r.text(0))});
    if (!like.empty()) {
      out.push_back("key " + r.text(3) + " " + shown(r.text(0)) + " of team " + shown(r.text(2)) +
                    " looks like its key " + shown(like[0].text(0)));
    }
  }
  return out;
}

// Each gateway's lease (docs/operating.md): how long one of its heartbeats lets it serve, which
// the control plane waits out for a gateway that has not applied a change.
constexpr std::string_view kV10 = R"sql(
ALTER TABLE gateways ADD COLUMN lease_ms BIGINT NOT NULL DEFAULT 2000;
)sql";

// The parts of each request's token totals by kind (token_kinds.hpp: TokenKinds), in the spend log,
// its daily aggregates and the inference cache (which a hit's spend row takes them from). Rows
// written before read 0: no cached tokens, no cache writes, no audio, no reasoning.
constexpr std::string_view kV11 = R"sql(
ALTER TABLE spend ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN audio_prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend ADD COLUMN audio_completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily ADD COLUMN cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily ADD COLUMN audio_prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily ADD COLUMN audio_completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_tags ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_tags ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_tags ADD COLUMN cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_tags ADD COLUMN audio_prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_tags ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_tags ADD COLUMN audio_completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_users ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_users ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_users ADD COLUMN cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_users ADD COLUMN audio_prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_users ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE spend_daily_users ADD COLUMN audio_completion_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_cache ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_cache ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_cache ADD COLUMN cache_write_1h_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_cache ADD COLUMN audio_prompt_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_cache ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_cache ADD COLUMN audio_completion_tokens BIGINT NOT NULL DEFAULT 0;
)sql";

// The rules a key carries of its own (core/key_rules.hpp): when it expires (ms since the epoch)
// and the models it may ask for (a JSON array of names); NULL: no such rule.
constexpr std::string_view kV12 = R"sql(
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE api_keys ADD COLUMN allowed_models TEXT;
)sql";

// Rate limits: a key's and a team's own (null: the configured default), a key's budget (pico-USD)
// and its window; what every gateway together took of each limit's window (window_start 0: a
// concurrency limit, which has no window; ends_at 0: a window that never ends), each gateway's
// part of a concurrency limit, given back when the gateway dies, and what each key with a budget
// was charged in each of its windows.
constexpr std::string_view kV13 = R"sql(
ALTER TABLE api_keys ADD COLUMN rpm BIGINT;
ALTER TABLE api_keys ADD COLUMN tpm BIGINT;
ALTER TABLE api_keys ADD COLUMN concurrent BIGINT;
ALTER TABLE teams ADD COLUMN rpm BIGINT;
ALTER TABLE teams ADD COLUMN tpm BIGINT;
ALTER TABLE teams ADD COLUMN concurrent BIGINT;
ALTER TABLE api_keys ADD COLUMN budget BIGINT;
ALTER TABLE api_keys ADD COLUMN budget_window TEXT;
CREATE TABLE limit_counters (
  limit_id TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  ends_at BIGINT NOT NULL,
  used BIGINT NOT NULL,
  PRIMARY KEY (limit_id, window_start)
);
CREATE TABLE limit_slots (
  limit_id TEXT NOT NULL,
  gateway_id TEXT NOT NULL,
  held BIGINT NOT NULL,
  PRIMARY KEY (limit_id, gateway_id)
);
CREATE TABLE key_spend (
  key_public_id TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  spent BIGINT NOT NULL,
  PRIMARY KEY (key_public_id, window_start)
);
)sql";

// The alerts' outbox (docs/alerts.md): one row per threshold a team's balance fell below, written
// in the transaction of the settlement that crossed it, with the team's name and the balance after
// it (pico-USD) from which its body is made. A row is due at `due_at`; the gateway that leased it
// (`leased_by`, until `lease_until`) alone sends it, and records how that went: delivered, failed
// for good, or due again later. The index serves the leases' scan of what is still to send.
constexpr std::string_view kV14 = R"sql(
CREATE TABLE alert_outbox (
  id TEXT PRIMARY KEY,
  team_id TEXT NOT NULL REFERENCES teams (id),
  team TEXT NOT NULL,
  type TEXT NOT NULL,
  threshold BIGINT NOT NULL,
  balance BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  due_at BIGINT NOT NULL,
  attempts BIGINT NOT NULL DEFAULT 0,
  leased_by TEXT,
  lease_until BIGINT,
  delivered_at BIGINT,
  failed_at BIGINT,
  last_status BIGINT,
  key_public_id TEXT,
  budget BIGINT
);
CREATE INDEX alert_outbox_pending ON alert_outbox (due_at)
  WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX alert_outbox_team ON alert_outbox (team_id, created_at);
)sql";

constexpr std::array kMigrations{
    Migration{1, "teams, users, members, invites, api keys, change sequence, gateways", kV1},
    Migration{2, "balances, holds, spend log and its daily aggregates", kV2},
    Migration{3, "a team may refuse dryrun requests", kV3},
    Migration{4, "the part of a charge the balance could not cover", kV4},
    Migration{5, "console sessions, sign-in links and logins, audit log, spend by user", kV5},
    Migration{6, "idempotency keys and the inference cache", kV6},
    Migration{7, "identity-provider bindings, invitations' makers, sealed sign-ins", kV7,
              revokeOrphanInvitations},
    Migration{8, "the bytes of each team's Idempotency-Key answers", kV8},
    Migration{9, "skeletons of team and key names, unique", kV9, fillNameSkeletons, kV9Indexes},
    Migration{10, "each gateway's lease", kV10},
    Migration{11, "token counts by kind: cache reads and writes, audio, reasoning", kV11},
    Migration{12, "keys' own rules: expiry and allowed models", kV12},
    Migration{13, "rate limits and budgets: keys' and teams' own, shares across gateways", kV13},
    Migration{14, "the alerts' outbox", kV14},
};

}  // namespace

std::span<const Migration> migrations() { return kMigrations; }

MigrationReport migrate(Connection& c) {
  Transaction tx(c);
  c.lockSchema();
  c.script(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
      "name TEXT NOT NULL, applied_at BIGINT NOT NULL)");
  const Rows rows = c.query("SELECT MAX(version) FROM schema_migrations");
  MigrationReport report;
  report.from = rows.empty() ? 0 : rows.front().integer(0);
  const std::int64_t known = kMigrations.back().version;
  if (report.from > known) {
    throw StoreError(StoreError::Kind::Other, "the database schema is at version " +
                                                  std::to_string(report.from) +
                                                  ", newer than this tollgate knows (" +
                                                  std::to_string(known) + "): upgrade tollgate");
  }
  for (const Migration& m : kMigrations) {
    if (m.version > report.from) {
      c.script(m.sql);
      if (m.fill != nullptr) {
        m.fill(c);
      }
      if (!m.then.empty()) {
        c.script(m.then);
      }
      c.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
              {m.version, m.name, nowMs()});
    }
  }
  report.look_alikes = lookAlikes(c);
  tx.commit();
  report.to = known;
  return report;
}

}  // namespace tollgate::store
