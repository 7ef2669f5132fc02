// The exchange layer: the record of one exchange, from accept to its one end (who asked, what was
// planned, each upstream attempt, what it used and cost, what the cache and the Idempotency-Key
// did, how it ended), and its two ports: Settlement (settlement.hpp) and Observer (observer.hpp).
// It describes an exchange, not HTTP: the session makes the record, handlers, the pipeline's
// stages and billing fill it in as they go, so it is right however the exchange ends (even when
// the client leaves), and the session ends it once. Free of Asio but for the Settlement port's
// awaitable.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/lease.hpp"
#include "core/money.hpp"
#include "core/trace_context.hpp"
#include "core/usage.hpp"

namespace tollgate::exchange {

/// Who is calling: filled by authentication (empty in open mode).
struct Caller {
  std::string key_public_id;  ///< Never the key itself: that is a secret.
  std::string team_id;
  std::string team;
  bool team_allows_dryrun = true;  ///< Whether the team takes tollgate::dryrun requests.
  /// The user on whose behalf: the console's signed-in user (the playground), or the key's
  /// creator; empty for an operator's key and in open mode.
  std::string user_id;
  bool playground = false;  ///< Sent from the console's playground: tagged so in the spend log.
  /// The epoch of the gateway's lease in which the key was checked (core/lease.hpp); none in
  /// open mode. Should the lease lapse after it, the exchange is fenced.
  std::optional<std::uint64_t> lease_epoch;
  /// The models the key may ask for (core/key_rules.hpp: modelAllowed); null: any.
  std::shared_ptr<const std::vector<std::string>> allowed_models;
  key_rules::RateLimits key_limits;   ///< The key's own rate limits; each absent: [limits.key]'s.
  key_rules::RateLimits team_limits;  ///< Its team's own; each absent: [limits.team]'s.
  std::optional<key_rules::Budget> budget;  ///< The key's spend budget, if it has one.
};

/// Token counts of an answer, of every kind (core/usage.hpp).
using TokenUsage = usage::Counts;

/// One upstream attempt of an exchange, its times counted from the exchange's start.
struct AttemptRecord {
  std::string_view provider;                      ///< Its name, in the exchange's configuration.
  const config::UpstreamUrl* api_base = nullptr;  ///< Where it was sent (the provider's).
  trace::SpanId span{};                           ///< Its span: the parent the upstream is sent.
  std::chrono::microseconds started{0};           ///< When it was made.
  std::chrono::microseconds connected{0};         ///< When a connection took its request; 0: none.
  bool reused = false;                            ///< The connection was one the pool kept.
  std::chrono::microseconds first_byte{0};        ///< When the upstream's answer began; 0: never.
  std::chrono::microseconds ended{0};  ///< When it was over (its answer relayed, or failed).
  int status = 0;                      ///< The status relayed when it answered; 0: failed.
  std::string_view error_code;         ///< The catalogue code of its failure, if it failed.
};

/// What the inference cache did for an exchange.
enum class CacheOutcome : std::uint8_t { None, Hit, Miss, Partial };

/// What became of an exchange's Idempotency-Key.
enum class KeyOutcome : std::uint8_t {
  None,      ///< It had none (or was refused before its key was looked at).
  Claimed,   ///< Claimed for this attempt.
  Replayed,  ///< A retry, answered with the first answer.
  NotKept,   ///< A retry whose first answer was not kept (410).
  Conflict,  ///< The key was running (409) or used with another request (422).
};

struct RequestContext {
  using Clock = std::chrono::steady_clock;

  /// An exchange served under `pinned`, which it keeps alive to its end (a reload swaps the
  /// configuration for the exchanges that start after it).
  RequestContext(std::shared_ptr<const config::Config> pinned, std::string id)
      : request_id(std::move(id)), pin_(std::move(pinned)), config(*pin_) {}
  /// An exchange served under `config`, which outlives it.
  RequestContext(const config::Config& config, std::string id)
      : request_id(std::move(id)), config(config) {}

  std::string request_id;  ///< Sent to the client and the upstream as x-request-id.
  Clock::time_point started = Clock::now();
  /// The W3C trace it belongs to (the caller's traceparent, or a new one) and its span, set
  /// once the request's head is read.
  trace::Context trace;

 private:
  std::shared_ptr<const config::Config> pin_;

 public:
  const config::Config& config;  ///< The configuration this exchange is served under.
  /// This gateway's lease on serving (core/lease.hpp); nullptr: never fenced (nothing to follow).
  const Lease* lease = nullptr;
  std::uint64_t lease_epoch = 0;  ///< The lease's epoch when the exchange was admitted.
  Caller caller;

  // The request line, for the log.
  std::string_view method;
  std::string_view path;  ///< Without the query string.
  /// The pattern of the route that took it (the router's, which outlives it); empty: none did.
  std::string_view route;

  // The plan.
  std::string model;     ///< The model string the client asked for.
  std::string provider;  ///< The provider that answered (or last tried).
  std::string variant;   ///< A function's variant that answered (or was last tried).
  /// The configured model that answered (or was last tried): a function's variant's model.
  const config::Model* served = nullptr;
  /// The model the answering upstream named (a span attribute only, cut to 128 bytes; never a
  /// label or part of our answer); empty when it named none.
  std::string response_model;
  int attempts = 0;     ///< Upstream attempts made, retries and fallbacks included.
  bool dryrun = false;  ///< tollgate::dryrun: admitted as billed, then nothing charged or kept.

  // The outcome.
  /// What the client effectively saw: an in-stream error's, 499 if it left. Set at the session's
  /// end from what was sent; before it, only the status an upstream's relay ended on.
  int status = 0;
  std::string error_code;                  ///< The catalogue code of a failure; empty on success.
  std::chrono::microseconds upstream{0};   ///< Time spent waiting on upstreams.
  Clock::time_point attempt_started{};     ///< When the current upstream attempt began.
  std::vector<AttemptRecord> attempt_log;  ///< Every upstream attempt, in order.
  CacheOutcome cache = CacheOutcome::None;
  KeyOutcome idempotency = KeyOutcome::None;
  TokenUsage usage;
  money::Pico cost = 0;  ///< What the team was charged.
  /// The start of the key's budget window the request was admitted in (ms; 0: none held).
  std::int64_t budget_window_start = 0;
  std::size_t bytes_in = 0;
  std::size_t bytes_out = 0;

  /// Whether the gateway's lease has run out, now or at any time since the exchange was admitted
  /// (its key table may then be behind a change that has returned): nothing more may be sent
  /// upstream or to the client. Checked before each irreversible step; docs/operating.md.
  bool fenced() const {
    return lease != nullptr && lease->trusted(Lease::Clock::now()) != lease_epoch;
  }

  /// How long after the exchange's start `t` is.
  std::chrono::microseconds since(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::microseconds>(t - started);
  }
};

}  // namespace tollgate::exchange
