// One gateway's shares of rate limits: parts of each limit's window (or, for a concurrency limit,
// of its slots) leased from the store, from which requests are admitted in memory, the balance's
// escrow idea applied to counts. Pure and single-threaded: the Limiter asks the store and tells
// the book what it granted, under a mutex of its own.
//
// A share is of one window: once the window has passed, what is left of it is worth nothing (the
// store forgets the window) and the next request asks anew. A concurrency share has no window but
// is the gateway's only while its lease holds: after a gap another gateway may have given its
// slots back, so it is trusted only in the lease epoch it was granted in (core/lease.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tollgate::limits {

class ShareBook {
 public:
  using Clock = std::chrono::steady_clock;

  /// What goes back to the store: an unused part of a window.
  struct Unused {
    std::string limit_id;
    std::int64_t window = 0;
    std::int64_t amount = 0;
  };

  /// Takes what it can of `amount` of limit `id`'s window `window` (0: concurrency) from the share
  /// at hand, when it is trusted in `epoch`: all of it, or what the share holds; the store is
  /// asked for the rest.
  std::int64_t takeUpTo(const std::string& id, std::int64_t window, std::int64_t amount,
                        std::optional<std::uint64_t> epoch, Clock::time_point now);
  /// What the store said of a grant.
  struct Grant {
    std::int64_t granted = 0;  ///< Of which the request that asked takes `taken`.
    std::int64_t taken = 0;
    std::int64_t used = 0;   ///< The window's total in the store now...
    std::int64_t limit = 0;  ///< ...of this.
    std::int64_t ends = 0;   ///< When the window ends (ms since the epoch; 0: never).
  };
  /// The store granted `g` of limit `id`'s window `window`, asked in lease epoch `epoch`.
  void granted(const std::string& id, std::int64_t window, const Grant& g, std::uint64_t epoch,
               Clock::time_point now);
  /// Gives `amount` back to the share, if it is still of window `window` (for a concurrency share:
  /// granted in lease epoch `epoch`); false when it is not (the window passed, or the slots were
  /// given back for this gateway: nothing is owed to anyone).
  bool give(const std::string& id, std::int64_t window, std::int64_t amount, std::uint64_t epoch);

  /// What is left of limit `id`'s window for every gateway, as far as this one knows: the limit
  /// less what the store had granted by the last grant, plus what this share still holds unused.
  /// `limit` when this gateway holds no share of the window.
  std::int64_t remaining(const std::string& id, std::int64_t window, std::int64_t limit) const;

  /// Takes out the unused parts of shares of current windows that no request took from for
  /// `idle` (all of them when `all`), to go back to the store; forgets shares of windows ended by
  /// `now_ms` (the store's clock).
  std::vector<Unused> takeIdle(Clock::time_point now, Clock::duration idle, bool all,
                               std::int64_t now_ms);

 private:
  struct Share {
    std::int64_t window = -1;  ///< The window it is of (0: concurrency).
    std::int64_t free = 0;     ///< Granted by the store, taken by no request.
    std::int64_t used = 0;     ///< The window's total in the store at the last grant.
    std::uint64_t epoch = 0;   ///< The lease epoch of its last grant.
    Clock::time_point touched;
    std::int64_t ends = 0;  ///< When its window ends; 0: never.
  };

  std::unordered_map<std::string, Share> shares_;  ///< By limit id.
};

}  // namespace tollgate::limits
