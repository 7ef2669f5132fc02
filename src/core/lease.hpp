// The gateway's lease: how recently it proved to the store that it is alive and caught up. It
// serves only while its last committed heartbeat began less than the lease ago (a heartbeat
// counts once the key table holds every change the store had when it committed); past that it is
// fenced: it answers nothing until a heartbeat begun after the gap has committed. The control
// plane waits, for a gateway that has not applied a change, until the store's clock shows no
// heartbeat from it for its lease and a second more, so the lease always runs out first.
//
// The money fence reads it too: another gateway reclaims the holds of one whose last heartbeat
// is kDeadAfter old, so what a gateway holds in memory is its own only within the lease, and
// after any gap (the process stopped, its VM paused, the store out of reach) a new epoch begins
// in which it must find its holds in the store again before it trusts them. The key follower
// renews it; everything on the request path reads it. Pure: times are given, never read.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

#include "core/error.hpp"

namespace tollgate {

class Lease {
 public:
  using Clock = std::chrono::steady_clock;
  /// A gateway whose last heartbeat is this old is dead: its holds go back to their balances.
  /// Longer than any lease (config: at most 8 s) and the control plane's second of margin.
  static constexpr std::chrono::milliseconds kDeadAfter{10'000};

  explicit Lease(std::chrono::milliseconds length) : length_(length) {}

  /// How long one heartbeat lets the gateway serve.
  std::chrono::milliseconds length() const { return length_; }

  /// A heartbeat that began at `started` has committed at `finished`, and the key table holds
  /// the changes the store had then. When more than the lease passed between the start of the
  /// one before and this commit, the gateway may have been fenced or taken for dead meanwhile: a
  /// new epoch begins.
  void renew(Clock::time_point started, Clock::time_point finished) {
    const Clock::rep before = last_start_.load();
    if (finished.time_since_epoch().count() - before > ticks()) {
      epoch_.fetch_add(1);  // Before the new start is seen: a reader sees both or neither.
    }
    last_start_.store(started.time_since_epoch().count());
  }

  /// Whether the gateway may serve at `now`: its last heartbeat began less than the lease ago.
  bool holds(Clock::time_point now) const {
    return now.time_since_epoch().count() - last_start_.load() < ticks();
  }

  /// The epoch, while the lease holds at `now`; else nullopt. What was found in the store during
  /// this epoch is still there.
  std::optional<std::uint64_t> trusted(Clock::time_point now) const {
    if (!holds(now)) {
      return std::nullopt;
    }
    return epoch_.load();  // After the start: one renewed since has its new epoch seen too.
  }

  /// The current epoch, trusted or not.
  std::uint64_t epoch() const { return epoch_.load(); }

 private:
  Clock::rep ticks() const { return std::chrono::duration_cast<Clock::duration>(length_).count(); }

  const std::chrono::milliseconds length_;
  std::atomic<Clock::rep> last_start_{std::numeric_limits<Clock::rep>::min() / 2};
  std::atomic<std::uint64_t> epoch_{0};
};

/// What a fenced gateway answers: 503 gateway_fenced (with Retry-After: 1), or the error event
/// that ends a stream.
inline Error fencedError() {
  return Error{ErrorKind::GatewayFenced,
               "this gateway has lost touch with its store and cannot tell whether keys and "
               "balances changed, so it serves nothing until it has caught up; retry",
               ""};
}

}  // namespace tollgate
