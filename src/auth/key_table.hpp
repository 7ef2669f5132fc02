// The gateway's in-memory view of every API key: what authentication needs, with no database
// round trip per request. A KeyTable is immutable once built (but for the last-used times, which
// requests mark and a background flush writes back); the KeyDirectory publishes a new one
// whenever the store's change sequence moves, and request threads pick it up on their next
// request.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/api_key.hpp"
#include "core/string_map.hpp"
#include "store/accounts_store.hpp"

namespace tollgate::auth {

struct Grant {
  Digest secret_hash{};
  std::string team_id;
  std::string team;
  bool revoked = false;
  bool team_active = true;
  bool creator_may_create = true;
  bool team_allows_dryrun = true;
  std::string creator_id;  ///< The creating user's id; empty for the operator's keys.
  std::optional<std::int64_t> expires_at;  ///< ms since the epoch; none: it does not expire.
  /// The models it may ask for, shared with the requests that use it; null: any.
  std::shared_ptr<const std::vector<std::string>> allowed_models;
  key_rules::RateLimits limits;       ///< Its own rate limits.
  key_rules::RateLimits team_limits;  ///< Its team's own.
  std::optional<key_rules::Budget> budget;
  /// When a request last used the key (ms since the epoch); marked at most once a second.
  mutable std::atomic<std::int64_t> last_used_ms{0};
  std::int64_t flushed_ms = 0;  ///< What the store already has; owned by the flushing thread.
};

class KeyTable {
 public:
  /// Builds from the store's rows; last-used marks not yet flushed carry over from `previous`.
  KeyTable(const std::vector<store::KeyGrant>& rows, const KeyTable* previous);

  const Grant* find(std::string_view public_id) const;
  std::size_t size() const { return grants_.size(); }

  /// The keys used since their last flush, with when; marks them flushed.
  std::vector<std::pair<std::string, std::int64_t>> takeUsed();

 private:
  StringMap<Grant> grants_;
};

/// The current KeyTable, shared by every worker thread.
class KeyDirectory {
 public:
  /// The table this thread should use: cached per thread, refreshed when a new one is published.
  const KeyTable* current() const;
  void publish(std::shared_ptr<KeyTable> table);
  /// The newest table, for the thread that builds and flushes (not for request threads).
  std::shared_ptr<KeyTable> latest() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<KeyTable> table_;
  std::atomic<std::uint64_t> version_{0};
};

}  // namespace tollgate::auth
