// The price keys of a [models.X] table: the spec's input and output prices per token, cache
// reads and writes, audio, and long-context tiers ([[models.X.price_tiers]]), with their
// defaults resolved and every nonsense refused (docs/billing.md).
#pragma once

#include <array>
#include <string_view>

#include "config/table_reader.hpp"
#include "core/prices.hpp"

namespace tollgate::config {

/// The keys parsePrices reads, for the model table's allowOnly.
inline constexpr std::array<std::string_view, 8> kPriceKeys{
    "input_cost_per_token",          "output_cost_per_token",
    "cached_input_cost_per_token",   "cache_write_cost_per_token",
    "cache_write_1h_cost_per_token", "input_audio_cost_per_token",
    "output_audio_cost_per_token",   "price_tiers"};

/// The prices of the model table `r` reads: cache reads and 5-minute writes default to the input
/// price, 1-hour writes to the 5-minute price, output audio to the output price; input audio has
/// no default (Prices::input_audio says whether it is priced). A tier's input kinds default to
/// its input price (itself the model's when left out), its output to the model's output price.
money::Prices parsePrices(const TableReader& r);

}  // namespace tollgate::config
