// The configuration being served, swapped whole by a reload (SIGHUP) while requests run: each
// exchange pins the snapshot it starts with (a stream keeps it to its end), so a request is
// planned, held and charged under one configuration. What cannot change without a restart
// (listeners, the store, the route table's limits) is kept from the running configuration.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace tollgate::config {

class LiveConfig {
 public:
  explicit LiveConfig(Config first) : current_(std::make_shared<const Config>(std::move(first))) {}

  /// The configuration now served; what it points to lives as long as the pointer is held.
  std::shared_ptr<const Config> pin() const { return current_.load(std::memory_order_acquire); }

  /// Serves `next` to the exchanges that start from now on.
  void swap(std::shared_ptr<const Config> next) {
    current_.store(std::move(next), std::memory_order_release);
  }

 private:
  std::atomic<std::shared_ptr<const Config>> current_;
};

/// Gives `next` the running configuration's values of every key that needs a restart, and
/// returns those keys whose values differed (dotted, e.g. "gateway.listen", "storage"): [gateway]
/// listen, auth, open_team, workers, max_body_bytes, max_upload_bytes and lease_ms; every key of
/// [storage], [cache] and [console].
std::vector<std::string> keepRestartOnly(Config& next, const Config& running);

}  // namespace tollgate::config
