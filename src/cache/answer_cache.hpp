// The inference cache's answers: an in-memory front, bounded in bytes and shared by every I/O
// thread, before the store, where the answers live (so gateways on one PostgreSQL share them).
// A read the front has costs no round trip; one it lacks asks the store through the writer
// (StoreWork) and keeps what it found. A write goes to the front at once and to the store when
// the writer has nothing else to do, never in front of a charge. Entries are per team: a key is
// only ever looked up under the team that asks.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "store/cache_store.hpp"
#include "store/store_work.hpp"

namespace tollgate::cache {

class AnswerCache {
 public:
  struct Options {
    std::int64_t memory_bytes = 0;    ///< What the front may hold.
    std::int64_t team_max_bytes = 0;  ///< What one team may keep in the store (0: no cap).
    /// Entries older than this are never answered, whatever a read asks (0: any age), as the
    /// store prunes them: one the front still holds is as gone as one pruned.
    std::int64_t retention_ms = 0;
  };

  /// `store` nullptr: the front alone (a gateway that bills nothing has no writer).
  AnswerCache(Options options, store::StoreWork* store);

  /// The entries of `keys` for `team_id` created at or after `not_before` (ms since the epoch)
  /// and within the retention, in order: from the front, else from the store in one task for all
  /// that the front lacks.
  boost::asio::awaitable<std::vector<std::optional<store::CacheEntry>>> find(
      std::string team_id, std::vector<std::string> keys, std::int64_t not_before);

  /// Keeps `entry`: in the front at once, in the store when the writer is idle.
  void put(store::CacheEntry entry);

  /// What the front holds, in bytes (its accounting: bodies, keys and a per-entry overhead).
  std::int64_t memoryBytes() const;

 private:
  struct Node {
    std::string id;  ///< Team and key.
    store::CacheEntry entry;
    std::int64_t bytes = 0;
  };

  /// Looks `id` up in the front (moving it to the front of the LRU order).
  std::optional<store::CacheEntry> recall(const std::string& id, std::int64_t not_before);
  /// Puts `entry` in the front, evicting the least recently used past the cap.
  void remember(store::CacheEntry entry);
  /// Sends what is pending to the store, when the writer is idle.
  void flush();

  Options options_;
  store::StoreWork* store_;
  mutable std::mutex mu_;
  std::list<Node> lru_;  ///< Most recently used first.
  std::unordered_map<std::string, std::list<Node>::iterator> index_;
  std::int64_t bytes_ = 0;
  std::vector<store::CacheEntry> pending_;  ///< Not yet posted to the store.
  std::int64_t pending_bytes_ = 0;
  bool flush_posted_ = false;
};

}  // namespace tollgate::cache
