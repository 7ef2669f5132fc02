// The store's SQL for rate limits: what every gateway together took of each limit's window, and
// each gateway's part of a concurrency limit (limits/limiter.hpp leases shares through it).
#pragma once

#include <cstdint>
#include <string>

#include "store/connection.hpp"

namespace tollgate::store {

/// What a gateway was granted of a limit's window.
struct LimitGrant {
  std::int64_t granted = 0;  ///< 0: what the request needs does not fit.
  std::int64_t used = 0;     ///< The window's total taken by every gateway, after the grant.
  std::int64_t now_ms = 0;   ///< The store's clock, which places the windows.
};

/// Rate limits' shares, in the caller's transaction.
class LimitsStore {
 public:
  explicit LimitsStore(Connection& c) : c_(&c) {}

  /// Takes for gateway `gateway_id` at least `need` and at most `want` of limit `limit_id`'s
  /// window `window_start` (0: a concurrency limit) ending at `ends_at` (0: never), within `limit`
  /// in all: as much of `want` as fits, or nothing when `need` does not. One conditional update
  /// of one row: exact however many gateways ask at once.
  LimitGrant grant(const std::string& limit_id, std::int64_t window_start, std::int64_t ends_at,
                   std::int64_t need, std::int64_t want, std::int64_t limit,
                   const std::string& gateway_id);
  /// Gives back `amount` that gateway `gateway_id` took of the window and did not use; of a
  /// concurrency limit, only what the store still counts as the gateway's (none once reclaimed).
  void giveBack(const std::string& limit_id, std::int64_t window_start, std::int64_t amount,
                const std::string& gateway_id);
  /// Gives back the concurrency slots of gateways silent for `dead_ms` (or forgotten), forgets
  /// windows that ended more than `keep_ms` ago, and keys' spend of budget windows that ended.
  void reclaim(std::int64_t dead_ms, std::int64_t keep_ms);
  /// How many gateways heartbeat within `dead_ms`: the shares are cut among them.
  std::int64_t liveGateways(std::int64_t dead_ms);
  /// The store's clock.
  std::int64_t nowMs();

 private:
  Connection* c_;
};

}  // namespace tollgate::store
