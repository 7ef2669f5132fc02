// How long to wait before retrying an upstream: exponential backoff with full jitter (a uniform
// wait between zero and a doubling ceiling, so that clients that failed together do not retry
// together), or the upstream's own Retry-After when it asks for longer; never past a cap.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace tollgate::routing {

using Millis = std::chrono::milliseconds;

/// The ceiling of the first retry's wait; it doubles with each retry.
inline constexpr Millis kBackoffBase{100};

/// The wait before retry number `retry` (0 for the first): `unit` (uniform in [0, 1)) of the
/// ceiling min(max_delay, kBackoffBase × 2^retry).
Millis backoff(int retry, Millis max_delay, double unit);

/// A Retry-After value: delay-seconds, or an HTTP-date (RFC 9110 IMF-fixdate) counted from
/// `now`; a date in the past is zero. nullopt for anything else.
std::optional<Millis> parseRetryAfter(std::string_view value,
                                      std::chrono::system_clock::time_point now);

/// The wait before a retry: the backoff, or `retry_after` when it is longer. nullopt when the
/// upstream asks for a wait longer than `max_delay`: then another provider should be tried.
std::optional<Millis> retryDelay(int retry, Millis max_delay, std::optional<Millis> retry_after,
                                 double unit);

}  // namespace tollgate::routing
