// The rate limits of the configuration: [limits.key] and [limits.team] (every key's and every
// team's unless it has its own) and a model's [models.ID.limits] (the whole fleet's use of it).
#pragma once

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace tollgate::config {

/// The most any limit may be: far above any provider's quota, and small enough that a window's
/// sum of token bounds never overflows.
inline constexpr std::int64_t kMaxLimit = 1'000'000'000'000;

/// One scope's limits `r` reads: rpm, tpm and (when `concurrent`) concurrent, each at least 1.
Limits parseLimits(const TableReader& r, bool concurrent);

/// The [limits] table `r` reads: its `key` and `team` tables.
LimitDefaults parseLimitDefaults(const TableReader& r);

}  // namespace tollgate::config
