// The store's registry of running gateways: each registers itself, heartbeats (saying which
// change it has applied) and unregisters; liveness is judged on the store's clock.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "store/connection.hpp"

namespace tollgate::store {

/// A running gateway, as it registered itself.
struct GatewayRecord {
  std::string id;
  std::string host;
  std::int64_t pid = 0;
  std::int64_t seen_at = 0;
  std::int64_t applied_seq = 0;
  std::int64_t lease_ms = 0;  ///< How long one of its heartbeats lets it serve.
  /// Read back only: how long ago its last heartbeat committed, by the store's clock.
  std::int64_t silent_ms = 0;
};

/// The gateways' registry, in the caller's transaction.
class GatewayStore {
 public:
  explicit GatewayStore(Connection& c) : c_(&c) {}

  /// Registers a gateway; its times are the store's clock, not the record's.
  void registerGateway(const GatewayRecord& g);
  /// Records that gateway `id` is alive and has applied `applied_seq`; false when the store has
  /// no row for it (forgotten: it must register again).
  bool heartbeat(const std::string& id, std::int64_t applied_seq);
  void unregisterGateway(const std::string& id);
  /// Gateways registered from `host`.
  std::vector<GatewayRecord> gatewaysOn(const std::string& host);
  /// Gateways that have not applied change `seq`, each with how long it has been silent.
  std::vector<GatewayRecord> laggingGateways(std::int64_t seq);
  void forgetGatewaysUnseenFor(std::int64_t ms);
  /// PostgreSQL: the server ends this connection's session should a transaction of it sit idle
  /// for `limit` (its process stopped mid-transaction), so that the locks it holds (a heartbeat's
  /// on the change sequence) never hold up others for longer. SQLite: nothing can.
  void endTransactionsIdleFor(std::chrono::milliseconds limit);

 private:
  Connection* c_;
};

}  // namespace tollgate::store
