// Circuit breakers, one per provider of each model (per gateway process): after a number of
// consecutive failed attempts the provider is skipped for a cooldown, so a provider that is down
// gets no retry storm; then a single probe request is let through (half-open) and its outcome
// closes the breaker or opens it for another cooldown. Thread-safe: workers share them.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "config/config.hpp"

namespace tollgate::routing {

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  enum class State { Closed, Open, HalfOpen };

  explicit CircuitBreaker(config::BreakerPolicy policy) : policy_(policy) {}

  /// Takes a reloaded configuration's policy, keeping the state.
  void setPolicy(config::BreakerPolicy policy);

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
  mutable std::mutex mutex_;
  config::BreakerPolicy policy_;
  State state_ = State::Closed;
  std::int64_t failures_ = 0;
  Clock::time_point open_until_{};
  bool probing_ = false;
};

/// The name of a state: "closed", "open", "half_open".
std::string_view stateName(CircuitBreaker::State s);

/// Every provider's breaker, keyed by (model id, provider name) rather than by a configuration,
/// so that their state outlives a reload: a provider that is still configured keeps its breaker,
/// one whose type, api_base or upstream model changed is another upstream and starts afresh.
class Breakers {
 public:
  /// Makes the breakers of `config`'s providers.
  explicit Breakers(const config::Config& config);

  /// Makes those of a reloaded configuration's new or changed providers, gives those kept their
  /// new policy, and forgets those no longer configured (a request still holding one keeps it).
  void adopt(const config::Config& config);

  /// The breaker of `model`'s `provider`, of a configuration adopted.
  std::shared_ptr<CircuitBreaker> of(const config::Model& model,
                                     const config::Provider& provider) const;

  /// `[{"model":…,"provider":…,"state":…,"consecutive_failures":N,"open_for_ms":N}…]`, in
  /// `config`'s order.
  std::string statusJson(const config::Config& config, CircuitBreaker::Clock::time_point now) const;

 private:
  /// A breaker and the upstream its history is of (the provider's type, api_base and model).
  struct Entry {
    config::ProviderType type;
    config::UpstreamUrl api_base;
    std::string model;
    std::shared_ptr<CircuitBreaker> breaker;

    bool reaches(const config::Provider& p) const {
      return type == p.type && api_base == p.api_base && model == p.model;
    }
  };
  using ByProvider = std::map<std::string, Entry, std::less<>>;
  mutable std::shared_mutex mutex_;
  std::map<std::string, ByProvider, std::less<>> breakers_;  ///< By model id, provider name.
};

}  // namespace tollgate::routing
