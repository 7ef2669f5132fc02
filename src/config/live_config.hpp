// The configuration being served, swapped whole by a reload (SIGHUP) while requests run: each
// exchange pins the snapshot it starts with (a stream keeps it to its end), so a request is
// planned, held and charged under one configuration. What cannot change without a restart
// (listeners, the store, the route table's limits) is kept from the running configuration.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace tollgate::config {

/// A mutex rather than std::atomic<std::shared_ptr>: libstdc++ 12's load() releases its lock
/// with a relaxed store, so its read of the pointer does not happen before a later swap's write
/// (ThreadSanitizer reports the race). Held for a reference count's increment, it is
/// uncontended in practice.
class LiveConfig {
 public:
  explicit LiveConfig(Config first) : current_(std::make_shared<const Config>(std::move(first))) {}

  /// The configuration now served; what it points to lives as long as the pointer is held.
  std::shared_ptr<const Config> pin() const {
    const std::lock_guard lock(mutex_);
    return current_;
  }

  /// Serves `next` to the exchanges that start from now on. The configuration it replaces is
  /// destroyed by the last exchange that pinned it, outside the lock.
  void swap(std::shared_ptr<const Config> next) {
    const std::lock_guard lock(mutex_);
    current_.swap(next);
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Config> current_;
};

/// Gives `next` the running configuration's values of every key that needs a restart, and
/// returns those keys whose values differed (dotted, e.g. "gateway.listen", "storage"): [gateway]
/// listen, auth, open_team, workers, max_body_bytes, max_upload_bytes and lease_ms; every key of
/// [storage] and [cache]; [console] enabled, listen, public_url, owner_email and the session
/// times (its identity provider, sign-up and sign-in rules and team quota are reloaded); [traces]
/// endpoint, headers and max_queue_spans (sample_ratio is reloaded); [log] format; [metrics]
/// team_labels and max_teams (its allow and token are reloaded).
std::vector<std::string> keepRestartOnly(Config& next, const Config& running);

}  // namespace tollgate::config
