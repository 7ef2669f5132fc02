// Keeps a gateway's KeyDirectory in step with the store, on a thread of its own (the I/O threads
// never wait for the database). It registers the gateway in the store, follows the change
// sequence (woken by PostgreSQL's NOTIFY, or by SQLite's data version moving), rebuilds and
// publishes the key table when the sequence moves, records the sequence it has applied (what
// `tollgate admin` waits for), heartbeats, and writes back coalesced last-used times.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/key_table.hpp"
#include "store/liveness.hpp"
#include "store/store.hpp"

namespace tollgate::auth {

class KeyFollower {
 public:
  static constexpr std::chrono::milliseconds kHeartbeat{500};
  static constexpr std::chrono::milliseconds kFlushEvery{2'000};

  /// Connects, registers the gateway as `gateway_id`, loads and publishes the first table, then
  /// follows on a thread. `key_roles` are the roles that may create keys: a key works while its
  /// creator has one. Each heartbeat that commits is told to `liveness`. Throws StoreError when
  /// the store cannot be reached at start.
  KeyFollower(store::Location where, KeyDirectory& keys, std::string gateway_id,
              std::vector<std::string> key_roles, store::Liveness& liveness);
  /// Stops following, flushes last-used times and unregisters.
  ~KeyFollower();
  KeyFollower(const KeyFollower&) = delete;
  KeyFollower& operator=(const KeyFollower&) = delete;

 private:
  void run();
  using Clock = std::chrono::steady_clock;
  void step(Clock::time_point& last_beat, Clock::time_point& last_flush);
  void reload();
  /// Records that this gateway is alive, in the store and then in liveness_.
  void heartbeat();
  void flush();
  void reconnect();

  store::Location where_;
  KeyDirectory& keys_;
  std::string gateway_id_;
  std::vector<std::string> key_roles_;
  store::Liveness& liveness_;
  std::unique_ptr<store::Store> db_;
  std::int64_t applied_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tollgate::auth
