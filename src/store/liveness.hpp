// How recently this gateway proved to the store that it is alive. Another gateway reclaims the
// holds of one whose last heartbeat is kDeadAfter old by the store's clock, so a gateway may
// spend what it holds in memory only while its own last heartbeat is well within that, and after
// any gap (the process stopped, its VM paused, the store out of reach) it must find its holds
// still in the store before it trusts them again. The key follower heartbeats; the ledger reads.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>

namespace tollgate::store {

class Liveness {
 public:
  using Clock = std::chrono::steady_clock;
  /// A gateway whose last heartbeat is this old is dead: its holds go back to their balances.
  static constexpr std::chrono::milliseconds kDeadAfter{10'000};
  /// Half of kDeadAfter: what is held stays this gateway's while its last heartbeat began less
  /// than this long ago (the rest is margin for a slow commit and for clocks that drift).
  static constexpr std::chrono::milliseconds kTrustFor{5'000};

  /// A heartbeat that began at `started` has committed at `finished`. When more than kTrustFor
  /// passed between the start of the one before and this commit, the gateway may have been taken
  /// for dead meanwhile: a new epoch begins.
  void beat(Clock::time_point started, Clock::time_point finished) {
    const Clock::rep before = last_start_.load();
    if (finished.time_since_epoch().count() - before >
        std::chrono::duration_cast<Clock::duration>(kTrustFor).count()) {
      epoch_.fetch_add(1);  // Before the new start is seen: a reader sees both or neither.
    }
    last_start_.store(started.time_since_epoch().count());
  }

  /// The epoch, when the last heartbeat began less than kTrustFor before `now`; else nullopt.
  /// What was found in the store during this epoch is still there.
  std::optional<std::uint64_t> trusted(Clock::time_point now) const {
    const Clock::rep start = last_start_.load();
    if (now.time_since_epoch().count() - start >=
        std::chrono::duration_cast<Clock::duration>(kTrustFor).count()) {
      return std::nullopt;
    }
    return epoch_.load();
  }

  /// The current epoch, trusted or not.
  std::uint64_t epoch() const { return epoch_.load(); }

 private:
  std::atomic<Clock::rep> last_start_{std::numeric_limits<Clock::rep>::min() / 2};
  std::atomic<std::uint64_t> epoch_{0};
};

}  // namespace tollgate::store
