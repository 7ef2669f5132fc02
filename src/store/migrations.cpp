#include "store/migrations.hpp"

#include <array>

#include "store/store.hpp"  // nowMs

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

// Each gateway's lease (docs/operating.md): how long one of its heartbeats lets it serve, which
// the control plane waits out for a gateway that has not applied a change.
constexpr std::string_view kV7 = R"sql(
ALTER TABLE gateways ADD COLUMN lease_ms BIGINT NOT NULL DEFAULT 2000;
)sql";

constexpr std::array kMigrations{
    Migration{1, "teams, users, members, invites, api keys, change sequence, gateways", kV1},
    Migration{2, "balances, holds, spend log and its daily aggregates", kV2},
    Migration{3, "a team may refuse dryrun requests", kV3},
    Migration{4, "the part of a charge the balance could not cover", kV4},
    Migration{5, "console sessions, sign-in links and logins, audit log, spend by user", kV5},
    Migration{6, "idempotency keys and the inference cache", kV6},
    Migration{7, "each gateway's lease", kV7},
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
      c.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
              {m.version, m.name, nowMs()});
    }
  }
  tx.commit();
  report.to = known;
  return report;
}

}  // namespace tollgate::store
