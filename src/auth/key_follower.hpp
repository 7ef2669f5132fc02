// Keeps a gateway's KeyDirectory in step with the store, on a thread of its own (the I/O threads
// never wait for the database). It registers the gateway in the store (again, should the store
// have forgotten it), follows the change sequence (woken by PostgreSQL's NOTIFY, or by SQLite's
// data version moving), heartbeats every quarter of the gateway's lease, and writes back
// coalesced last-used times. Each heartbeat is one transaction that reads the change sequence
// (no change commits meanwhile), rebuilds and publishes the key table when it moved, and records
// the sequence applied (what `tollgate admin` waits for); once it has committed, the lease is
// renewed from the heartbeat's start (core/lease.hpp).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "auth/key_table.hpp"
#include "core/lease.hpp"
#include "store/connection.hpp"

namespace tollgate::store {
class Store;
}  // namespace tollgate::store

namespace tollgate::auth {

class KeyFollower {
 public:
  static constexpr std::chrono::milliseconds kFlushEvery{2'000};

  /// Connects, registers the gateway as `gateway_id`, loads and publishes the first table, then
  /// follows on a thread. `key_roles` are the roles that may create keys: a key works while its
  /// creator has one. Each heartbeat that commits renews `lease`. Throws StoreError when the
  /// store cannot be reached at start.
  KeyFollower(store::Location where, KeyDirectory& keys, std::string gateway_id,
              std::vector<std::string> key_roles, Lease& lease);
  /// Stops following, flushes last-used times and unregisters.
  ~KeyFollower();
  KeyFollower(const KeyFollower&) = delete;
  KeyFollower& operator=(const KeyFollower&) = delete;

 private:
  void run();
  using Clock = std::chrono::steady_clock;
  void step(Clock::time_point& last_beat, Clock::time_point& last_flush);
  /// Records that this gateway is alive and caught up, in the store and then in lease_.
  void heartbeat();
  void registerGateway();
  void flush();
  /// Opens db_ afresh, listening for changes from then on.
  void connect();
  void reconnect();

  store::Location where_;
  KeyDirectory& keys_;
  std::string gateway_id_;
  std::vector<std::string> key_roles_;
  Lease& lease_;
  std::unique_ptr<store::Store> db_;
  std::int64_t applied_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tollgate::auth
