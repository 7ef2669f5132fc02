// The store's SQL for the inference cache. Bodies are stored as base64 (connection.hpp:
// decodedBody).
#include "store/cache_store.hpp"

#include <set>

#include "core/base64.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::store {
namespace {

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

std::optional<CacheEntry> CacheStore::findCacheEntry(const std::string& team_id,
                                                     const std::string& key,
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

void CacheStore::putCacheEntries(std::span<const CacheEntry> entries, std::int64_t team_max_bytes) {
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

std::int64_t CacheStore::pruneCache(std::int64_t before_ms) {
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
