// What a webhook receiver gets of an alert (docs/alerts.md), without I/O: the event's JSON body,
// made the same on every attempt from its outbox row; its Tollgate-Signature header, as Stripe
// signs its webhooks; and when a failed delivery is tried again.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/json.hpp"
#include "store/alert_store.hpp"

namespace tollgate::alerts {

/// The first retry waits this long, each next one twice the one before, up to kMaxRetryDelay.
inline constexpr std::chrono::seconds kFirstRetryDelay{1};
inline constexpr std::chrono::seconds kMaxRetryDelay{3600};
/// An event not delivered this long after it was written is marked failed.
inline constexpr std::chrono::hours kGiveUpAfter{24};

/// The event's body: {"id", "type", "created_at" (RFC 3339, UTC), "team" (its name),
/// "threshold", "balance_usd"}; for a key's budget {"id", "type", "created_at", "team", "key",
/// "threshold" (the fraction), "spend_usd", "budget_usd"}; amounts in USD as JSON numbers written
/// exactly (the shortest decimal, never an exponent).
std::string eventBody(const store::AlertRow& event);

/// A fraction of a key's budget, kept in parts per million, as the shortest decimal ("0.5").
std::string fractionText(std::int64_t ppm);

/// The body's members, into an object `w` has started: what a listing of the outbox shows of each
/// event before what became of its delivery.
void writeEventFields(json::Writer& w, const store::AlertRow& event);

/// The Tollgate-Signature header's value for `body` sent at `unix_seconds`:
/// "t=<unix_seconds>,v1=<lower-case hex HMAC-SHA256 under `secret` of "<t>.<body>">".
std::string signature(std::string_view secret, std::int64_t unix_seconds, std::string_view body);

/// How long to wait before the next try after `attempts` (>= 1) failed ones: kFirstRetryDelay,
/// doubling each time, at most kMaxRetryDelay.
std::chrono::seconds retryDelay(std::int64_t attempts);

/// When to try an event written at `created_ms` again after its `attempts`-th failed try at
/// `now_ms` (all in ms since the epoch); nullopt once that would be past kGiveUpAfter.
std::optional<std::int64_t> nextAttempt(std::int64_t created_ms, std::int64_t now_ms,
                                        std::int64_t attempts);

}  // namespace tollgate::alerts
