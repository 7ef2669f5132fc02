// The store's inference cache: answers by team and key, bounded in bytes per team.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "store/connection.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::store {

/// One answer in the inference cache.
struct CacheEntry {
  std::string team_id;
  std::string key;       ///< Hex digest of the normalised request (or of one embeddings input).
  std::string endpoint;  ///< "chat", "embedding", "rerank"
  std::int64_t created_at = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::string body;  ///< The answer as the cache keeps it.
  TokenKinds kinds;  ///< The parts of the counts by kind, which a hit's spend row records.
};

/// The inference cache's entries, in the caller's transaction. Bodies are any bytes.
class CacheStore {
 public:
  explicit CacheStore(Connection& c) : c_(&c) {}

  /// The entry of `key` for the team created at or after `not_before`, if any.
  std::optional<CacheEntry> findCacheEntry(const std::string& team_id, const std::string& key,
                                           std::int64_t not_before);
  /// Writes `entries` (a newer entry replaces one of the same team and key; an older one does
  /// not), then for each team written evicts its oldest entries until its bytes are at most
  /// `team_max_bytes` (0: no cap). In the caller's transaction, in one pipeline.
  void putCacheEntries(std::span<const CacheEntry> entries, std::int64_t team_max_bytes);
  /// Forgets entries created before `before_ms`; how many.
  std::int64_t pruneCache(std::int64_t before_ms);

 private:
  Connection* c_;
};

}  // namespace tollgate::store
