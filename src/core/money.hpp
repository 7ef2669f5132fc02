// Money as an integer count of pico-USD (1e-12 USD): small enough that every price a provider
// publishes per token (e.g. 0.000000075) and every charge (tokens x price) is exact, large
// enough for a balance of 9,223,372 USD in an int64. Decimal text is parsed exactly and only
// written back at the edges; a float never holds money.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tollgate::money {

using Pico = std::int64_t;

inline constexpr Pico kPicoPerUsd = 1'000'000'000'000;

/// Parses a non-negative decimal amount of USD as written in TOML or on a command line:
/// "10", "0.5", "0.00000015", "1.5e-7", "2E3". nullopt when it is not one, is negative, has a
/// non-zero digit finer than a pico-USD, or does not fit.
std::optional<Pico> parseUsd(std::string_view text);

/// The shortest decimal text of an amount in USD: 0.00000015, 12, -3.5.
std::string formatUsd(Pico amount);

/// count x unit_price, or nullopt on overflow (both must be non-negative).
std::optional<Pico> times(std::int64_t count, Pico unit_price);

/// a + b, or nullopt on overflow.
std::optional<Pico> plus(Pico a, Pico b);

}  // namespace tollgate::money
