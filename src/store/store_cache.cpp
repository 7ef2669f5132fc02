// The Store's SQL for Idempotency-Keys and the inference cache (see store.hpp). Bodies are stored
// as base64, so that bytes an upstream sent (not UTF-8, or with NULs) are text on both engines.
#include <array>
#include <map>
#include <set>

#include "core/base64.hpp"
#include "store/store.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::store {
namespace {

/// A body as stored; throws StoreError when it is not base64 (the store was written by hand).
std::string decodedBody(const std::string& stored, std::string_view table) {
  std::optional<std::string> bytes = base64::decode(stored);
  if (!bytes) {
    throw StoreError(StoreError::Kind::Other, "a body in " + std::string(table) + " is not base64");
  }
  return std::move(*bytes);
}

/// Subtracts from a team's sum the bytes of its kept answers that `forgotten` records took (rows
/// of team id and bytes).
void forgetBytes(Connection& c, const Rows& forgotten) {
  std::map<std::string, std::int64_t> by_team;  // In key order, as settlements lock them.
  for (const Row& r : forgotten) {
    if (r.integer(1) > 0) {
      by_team[r.text(0)] += r.integer(1);
    }
  }
  std::vector<Statement> updates;
  for (const auto& [team_id, bytes] : by_team) {
    updates.push_back(
        {"UPDATE idempotency_bytes SET bytes = bytes - $1 WHERE team_id = $2", {bytes, team_id}});
  }
  if (!updates.empty()) {
    c.pipeline(updates);
  }
}

/// The statement that keeps one cache entry, its kinds last; it replaces an older one.
std::string putEntry() {
  std::string kinds_set;
  for (const auto& [kind, field] : kTokenKinds) {
    kinds_set += ", " + std::string(kind) + " = excluded." + std::string(kind);
  }
  return "INSERT INTO inference_cache (team_id, key, endpoint, created_at, bytes, prompt_tokens, "
         "completion_tokens, body" +
         kindColumns() + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8" + kindPlaceholders(9) +
         ") ON CONFLICT (team_id, key) DO UPDATE SET endpoint = excluded.endpoint, created_at = "
         "excluded.created_at, bytes = excluded.bytes, prompt_tokens = excluded.prompt_tokens, "
         "completion_tokens = excluded.completion_tokens, body = excluded.body" +
         kinds_set + " WHERE inference_cache.created_at <= excluded.created_at";
}

}  // namespace

ClaimReply Store::claimIdempotencyKey(const IdempotencyClaim& c) {
  // An expired record is forgotten, its bytes with it: the deletion locks it on PostgreSQL, so
  // of attempts at once only one subtracts them. Then the claim is made, or the record taken
  // over when it is the same request's running claim of a gateway not seen within the alive
  // window. A conflict locks the record on PostgreSQL, the WHERE then judging its newest
  // version: of attempts at once, one takes it and the others find it running.
  const std::array<Statement, 2> statements{
      Statement{"DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND created_at < $3 "
                "RETURNING team_id, bytes",
                {c.team_id, c.key, c.now - c.window_ms}},
      Statement{
          "INSERT INTO idempotency_keys (team_id, key, digest, claim_id, gateway_id, state, "
          "created_at) VALUES ($1, $2, $3, $4, $5, 'running', $6) ON CONFLICT (team_id, key) DO "
          "UPDATE SET digest = excluded.digest, claim_id = excluded.claim_id, gateway_id = "
          "excluded.gateway_id, state = 'running', created_at = excluded.created_at WHERE "
          "idempotency_keys.state = 'running' AND idempotency_keys.digest = excluded.digest AND "
          "(idempotency_keys.created_at < $8 OR NOT EXISTS (SELECT 1 FROM gateways g WHERE g.id "
          "= idempotency_keys.gateway_id AND g.seen_at >= " +
              std::string(c_->nowMsSql()) + " - $7)) RETURNING 1",
          {c.team_id, c.key, c.digest, c.claim_id, c.gateway_id, c.now, c.alive_window_ms,
           c.lease_ms > 0 ? c.now - c.lease_ms : std::int64_t{0}}}};
  const std::vector<Rows> done = c_->pipeline(statements);
  forgetBytes(*c_, done[0]);
  if (!done[1].empty()) {
    return {};
  }
  // Neither new nor taken over: the record, live and locked, answers.
  const Rows rows = c_->query(
      "SELECT digest, state, request_id, kept, status, content_type, streamed, body FROM "
      "idempotency_keys WHERE team_id = $1 AND key = $2",
      {c.team_id, c.key});
  if (rows.empty()) {
    throw StoreError(StoreError::Kind::Other, "an idempotency key's record vanished while locked");
  }
  const Row& r = rows.front();
  if (r.text(0) != c.digest) {
    return {ClaimOutcome::Mismatch, std::nullopt, ""};
  }
  if (r.text(1) != "completed") {
    return {ClaimOutcome::Running, std::nullopt, ""};
  }
  if (r.integer(3) != 1) {
    const bool over_bound = r.integer(3) == kKeptOverBound;
    return {over_bound ? ClaimOutcome::CompletedOverBound : ClaimOutcome::CompletedNotKept,
            std::nullopt, r.text(2)};
  }
  return {ClaimOutcome::Completed,
          KeptAnswer{r.integer(4), r.text(5), r.integer(6) != 0,
                     decodedBody(r.text(7), "idempotency_keys")},
          r.text(2)};
}

void Store::releaseIdempotencyKey(const std::string& team_id, const std::string& key,
                                  const std::string& claim_id) {
  c_->query(
      "DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND claim_id = $3 AND state = "
      "'running'",
      {team_id, key, claim_id});
}

std::int64_t Store::pruneIdempotencyKeys(std::int64_t before_ms) {
  const Rows forgotten = c_->query(
      "DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING team_id, bytes", {before_ms});
  forgetBytes(*c_, forgotten);
  return static_cast<std::int64_t>(forgotten.size());
}

std::optional<CacheEntry> Store::findCacheEntry(const std::string& team_id, const std::string& key,
                                                std::int64_t not_before) {
  constexpr std::size_t kKindsColumn = 5;
  const Rows rows = c_->query(
      "SELECT endpoint, created_at, prompt_tokens, completion_tokens, body" + kindColumns() +
          " FROM inference_cache WHERE team_id = $1 AND key = $2 AND "
          "created_at >= $3",
      {team_id, key, not_before});
  if (rows.empty()) {
    return std::nullopt;
  }
  const Row& r = rows.front();
  return CacheEntry{team_id,
                    key,
                    r.text(0),
                    r.integer(1),
                    r.integer(2),
                    r.integer(3),
                    decodedBody(r.text(4), "inference_cache"),
                    readKinds(r, kKindsColumn)};
}

void Store::putCacheEntries(std::span<const CacheEntry> entries, std::int64_t team_max_bytes) {
  static const std::string put = putEntry();
  // The writes, then each team's eviction, in one pipeline: each statement sees the ones before.
  std::vector<Statement> writes;
  std::set<std::string> teams;
  for (const CacheEntry& e : entries) {
    std::vector<Param> params{e.team_id,
                              e.key,
                              e.endpoint,
                              e.created_at,
                              static_cast<std::int64_t>(e.body.size()),
                              e.prompt_tokens,
                              e.completion_tokens,
                              base64::encode(e.body)};
    appendKinds(e.kinds, params);
    writes.push_back({put, std::move(params)});
    teams.insert(e.team_id);
  }
  if (team_max_bytes > 0) {
    // Newest first, an entry's running total is what the team keeps if it and every newer entry
    // stay: the entries from the first total above the cap on are the oldest to evict.
    for (const std::string& team_id : teams) {
      writes.push_back(
          {"DELETE FROM inference_cache WHERE team_id = $1 AND key IN (SELECT key FROM (SELECT "
           "key, SUM(bytes) OVER (ORDER BY created_at DESC, key DESC) AS kept FROM "
           "inference_cache WHERE team_id = $1) newest WHERE kept > $2)",
           {team_id, team_max_bytes}});
    }
  }
  if (!writes.empty()) {
    c_->pipeline(writes);
  }
}

std::int64_t Store::pruneCache(std::int64_t before_ms) {
  // Team by team, along the index the reads and evictions use (none on time alone to keep up to
  // date), in one pipeline.
  std::vector<Statement> deletes;
  for (const Row& team : c_->query("SELECT id FROM teams")) {
    deletes.push_back(
        {"DELETE FROM inference_cache WHERE team_id = $1 AND created_at < $2 RETURNING 1",
         {team.text(0), before_ms}});
  }
  if (deletes.empty()) {
    return 0;
  }
  std::int64_t n = 0;
  for (const Rows& deleted : c_->pipeline(deletes)) {
    n += static_cast<std::int64_t>(deleted.size());
  }
  return n;
}

}  // namespace tollgate::store
