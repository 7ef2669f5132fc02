// The routing sections of the configuration: a model's retries and timeouts, a provider's circuit
// breaker, and [functions.NAME] with their variants, checked against the models they name.
#pragma once

#include <vector>

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace tollgate::config {

/// `retries = { num_retries = N, max_delay_ms = MS }` of the table `r` reads, else `fallback`.
RetryPolicy parseRetries(const TableReader& r, const RetryPolicy& fallback);

/// `timeouts = { non_streaming_total_ms, streaming_first_token_ms, streaming_total_ms }`.
Timeouts parseTimeouts(const TableReader& r, const Timeouts& fallback);

/// `circuit_breaker = { failures = N, cooldown_ms = MS }`.
BreakerPolicy parseBreaker(const TableReader& r);

/// The [functions] table `r` reads; every variant's model must be one of `models` (sorted by id)
/// and serve chat.
std::vector<Function> parseFunctions(const TableReader& r, const std::vector<Model>& models);

}  // namespace tollgate::config
