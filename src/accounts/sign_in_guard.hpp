// Anonymous sign-in failures, kept in memory: a request with no valid credential writes nothing
// to the store. Per source (address::throttleKey: an IPv4 address, or an IPv6 /64), failures are
// counted in windows of a minute: past kThrottleAfter in one window, that source's sign-in attempts
// are refused before any store access until the window ends; a sign-in that succeeds forgets its
// source's count. What failed since the last summary is handed out at most once a minute (the count
// and the busiest sources, never the caller's text), for one audit row. Thread-safe: every worker
// of a gateway shares one.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tollgate::accounts {

/// The failed sign-ins of a while, for one audit row.
struct SignInFailures {
  std::int64_t count = 0;
  /// The busiest sources, most failures first (at most SignInGuard::kBusiestShown).
  std::vector<std::pair<std::string, std::int64_t>> busiest;
};

/// The audit row's target for `f`: "N failed sign-ins; busiest sources: A (n), B (m)".
std::string describe(const SignInFailures& f);

class SignInGuard {
 public:
  using Clock = std::chrono::steady_clock;
  /// Failures from one source in one window before its attempts are refused.
  static constexpr std::int64_t kThrottleAfter = 30;
  static constexpr std::chrono::seconds kWindow{60};
  /// Sources tracked at once; past it a window that has ended is forgotten first, then the
  /// source with the fewest failures.
  static constexpr std::size_t kMaxSources = 10'000;
  /// How often a summary is handed out at most.
  static constexpr std::chrono::seconds kSummaryEvery{60};
  static constexpr std::size_t kBusiestShown = 10;

  /// How long `source` must wait before it may try again; zero when it may now.
  std::chrono::seconds throttledFor(std::string_view source, Clock::time_point now);
  /// Counts one failed sign-in from `source`.
  void failed(std::string_view source, Clock::time_point now);
  /// A sign-in from `source` succeeded: its count starts again.
  void succeeded(std::string_view source);
  /// The failures counted since the last summary, when there are any and the last summary was
  /// handed out at least kSummaryEvery before `now` (they are then forgotten); else nullopt.
  std::optional<SignInFailures> takeSummary(Clock::time_point now);

 private:
  struct Window {
    Clock::time_point start;
    std::int64_t count = 0;
  };
  /// Makes room for one more source in `windows_` (under the lock).
  void makeRoom(Clock::time_point now);

  std::mutex mu_;
  std::unordered_map<std::string, Window> windows_;
  std::int64_t pending_ = 0;
  std::unordered_map<std::string, std::int64_t> pending_by_source_;
  std::optional<Clock::time_point> last_summary_;
};

}  // namespace tollgate::accounts
