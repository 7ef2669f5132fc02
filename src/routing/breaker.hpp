// Circuit breakers, one per configured provider (per gateway process): after a number of
// consecutive failed attempts the provider is skipped for a cooldown, so a provider that is down
// gets no retry storm; then a single probe request is let through (half-open) and its outcome
// closes the breaker or opens it for another cooldown. Thread-safe: workers share them.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "config/config.hpp"

namespace tollgate::routing {

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State { Closed, Open, HalfOpen };

  explicit CircuitBreaker(config::BreakerPolicy policy) : policy_(policy) {}

  /// Whether an attempt may go to the provider at `now`. Once the cooldown is over, the first
  /// caller becomes the probe and the others are refused until its outcome is known.
  bool allow(Clock::time_point now);
  /// The attempt reached a working provider (it answered, even if it refused the request).
  void succeeded();
  /// The attempt failed in a way that counts against the provider.
  void failed(Clock::time_point now);
  /// The attempt proved nothing either way (the client left): a probe's turn is given back.
  void abandoned();

  struct Snapshot {
    State state = State::Closed;
    std::int64_t consecutive_failures = 0;
    Clock::duration open_for{0};  ///< Open: what is left of the cooldown.
  };
  Snapshot snapshot(Clock::time_point now) const;

 private:
  const config::BreakerPolicy policy_;
  mutable std::mutex mutex_;
  State state_ = State::Closed;
  std::int64_t failures_ = 0;
  Clock::time_point open_until_{};
  bool probing_ = false;
};

/// The name of a state: "closed", "open", "half_open".
std::string_view stateName(CircuitBreaker::State s);

/// Every provider's breaker, made once from the configuration, which outlives it.
class Breakers {
 public:
  explicit Breakers(const config::Config& config);

  /// The breaker of `provider`, which must be one of the configuration's.
  CircuitBreaker& of(const config::Provider& provider) const;

  /// `[{"model":…,"provider":…,"state":…,"consecutive_failures":N,"open_for_ms":N}…]`, in the
  /// configuration's order.
  std::string statusJson(CircuitBreaker::Clock::time_point now) const;

 private:
  const config::Config& config_;
  std::map<const config::Provider*, std::unique_ptr<CircuitBreaker>> breakers_;
};

}  // namespace tollgate::routing
