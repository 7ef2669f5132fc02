// Rate limits that hold across every gateway on one store (docs/limits.md): requests and tokens
// per calendar minute (UTC, by the store's clock) and requests in flight, per key, team and model.
// Each gateway leases shares of each limit's window from the store (LimitsStore, through the
// store's writer) and admits from them in memory (ShareBook), so the hot path makes no database
// round trip; a share is at most max(1, limit / (4 x live gateways)), and one unused for
// kShareIdle goes back on the writer's next tick. The store never grants more than a limit in a
// window, so N gateways together never admit more. Without a store (open mode with nothing
// billed) the counts are this gateway's own.
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/error.hpp"
#include "core/lease.hpp"
#include "limits/share_book.hpp"
#include "store/journal.hpp"

namespace tollgate::store {
class Writer;
}  // namespace tollgate::store

namespace tollgate::limits {

/// Requests and tokens per minute, requests in flight, and a budget's pico-USD.
enum class Kind : std::uint8_t { Requests, Tokens, Concurrent, Spend };

/// A window of a limit: from `start` to `ends` (ms since the epoch, by the store's clock; 0: it
/// never ends).
struct Window {
  std::int64_t start = 0;
  std::int64_t ends = 0;
};

/// One limit a request counts against.
struct Ask {
  std::string id;  ///< The limit's id in the store, e.g. "key:PUBLIC_ID:rpm".
  Kind kind = Kind::Requests;
  std::int64_t limit = 0;
  std::int64_t amount = 1;  ///< 1 request (or slot), the request's token bound, or its hold.
  ErrorKind refusal = ErrorKind::KeyRpmExceeded;  ///< What the request gets when it does not fit.
  /// A budget's window (its start must not be 0); none: the calendar minute, or for a
  /// concurrency limit no window at all.
  std::optional<Window> window = std::nullopt;
};

/// Where an admitted (or refused) request stands on one limit: for its x-ratelimit headers.
struct Standing {
  Kind kind = Kind::Requests;
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t reset_ms = 0;  ///< To its window's end.
};

class Limiter;

/// What a request took of its limits: concurrency slots go back when it is destroyed (the
/// exchange ended), the unused part of a token bound at settle().
class Taken {
 public:
  struct Entry {
    std::string id;
    Kind kind = Kind::Requests;
    std::int64_t window = 0;
    std::int64_t amount = 0;
    std::uint64_t epoch = 0;
  };

  Taken() = default;
  Taken(Limiter* limiter, std::vector<Entry> entries)
      : limiter_(limiter), entries_(std::move(entries)) {}
  Taken(Taken&& other) noexcept;
  Taken& operator=(Taken&& other) noexcept;
  Taken(const Taken&) = delete;
  Taken& operator=(const Taken&) = delete;
  ~Taken();

  /// The request used `tokens` and cost `cost`: what its token limits and budgets held beyond
  /// them goes back, while their window is the one it was admitted in.
  void settle(std::int64_t tokens, std::int64_t cost);
  /// Everything goes back at once (the request was refused after all).
  void giveAllBack();
  /// Adds `other`'s entries to these.
  void merge(Taken other);

 private:
  Limiter* limiter_ = nullptr;
  std::vector<Entry> entries_;
};

/// What admission found.
struct Admission {
  std::optional<Error> refused;             ///< Why the request is refused; none: admitted.
  std::optional<std::int64_t> retry_after;  ///< Seconds, on a refusal that may pass.
  std::vector<Standing> standings;          ///< One per limit asked, in order.
  Taken taken;                              ///< What it took.
};

class Limiter final : public store::Journal {
 public:
  /// An unused share goes back to the store after this long, for the other gateways.
  static constexpr std::chrono::milliseconds kShareIdle{400};
  static constexpr std::int64_t kWindowMs = 60'000;

  /// Shares through `writer` (nullptr: this gateway's memory alone), as gateway `gateway_id`,
  /// trusted while `lease` holds (nullptr: always). Throws StoreError when the store fails.
  Limiter(store::Writer* writer, std::string gateway_id, const Lease* lease);
  /// Gives every share back and leaves the writer.
  ~Limiter() override;
  Limiter(const Limiter&) = delete;
  Limiter& operator=(const Limiter&) = delete;

  /// Takes `amount` of each limit of `asks`, all of them or none: refused for the first that does
  /// not fit (429 with its code, Retry-After to its window's end, or none when the request alone
  /// is over the limit), or 503 limits_unavailable when the store cannot grant a share.
  boost::asio::awaitable<Admission> admit(const std::vector<Ask>& asks);

  /// The store's clock, as this gateway reads it (its own, corrected by the last grant's).
  std::int64_t nowMs() const;

  /// The writer's thread: nothing of its own is queued (grants are awaited tasks).
  bool commit() override { return false; }
  /// The writer's thread: gives idle shares back (all of them when `closing`), and every few
  /// seconds gives back dead gateways' slots and counts the live ones.
  void tick(bool closing) override;

 private:
  friend class Taken;
  using Clock = ShareBook::Clock;

  enum class Granted : std::uint8_t { Yes, No, Unavailable };
  /// Asks the store for a share of `a`'s window `w`, of which the request takes `need` (the rest
  /// of `a.amount` it has taken from its share at hand).
  boost::asio::awaitable<Granted> grant(const Ask& a, const Window& w, std::int64_t need,
                                        std::uint64_t epoch);
  /// Without a store: takes `a.amount` of the window's count, when it fits.
  bool takeLocally(const Ask& a, std::int64_t window);
  /// What is left of `a`'s window, as far as this gateway knows.
  std::int64_t remaining(const Ask& a, std::int64_t window);
  /// Gives `amount` of entry `e` back to its share.
  void giveBack(const Taken::Entry& e, std::int64_t amount);

  store::Writer* writer_;
  std::string gateway_id_;
  const Lease* lease_;
  std::atomic<std::int64_t> offset_ms_{0};  ///< The store's clock less this host's.
  std::atomic<std::int64_t> live_{1};       ///< Live gateways sharing the limits.
  std::mutex mu_;
  ShareBook book_;  ///< Guarded by mu_, as the one below.
  /// Without a store: each limit's count in its current window (0: concurrency).
  struct Count {
    std::int64_t window = -1;
    std::int64_t used = 0;
  };
  std::unordered_map<std::string, Count> local_;  ///< By limit id.
  Clock::time_point last_reclaim_{};              ///< Writer thread only.
};

/// The value of OpenAI's x-ratelimit-reset-* headers for `ms`: whole seconds, rounded up, at
/// least 1, in Go's duration format ("7s", "1m0s").
std::string resetText(std::int64_t ms);

/// The x-ratelimit headers of `standings`: for requests and tokens, the limit of that kind with
/// the smallest remaining fraction; remaining-requests 0 when `refused`.
std::vector<std::pair<std::string, std::string>> rateLimitHeaders(
    const std::vector<Standing>& standings, bool refused);

}  // namespace tollgate::limits
