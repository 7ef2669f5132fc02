// The token kinds: the parts of a request's token totals the spend log and the cache keep, taken
// from a usage and given back to one, and their SQL (columns, read from a row and bound as
// parameters in kTokenKinds' order), shared by the spend log, its aggregates and the cache.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/usage.hpp"
#include "store/connection.hpp"

namespace tollgate::store {

/// The parts of a request's token totals by kind (core/usage.hpp: usage::Counts), as the spend
/// log, its daily aggregates and the inference cache keep them; 0 where nothing was reported
/// (and in rows written before they were kept).
struct TokenKinds {
  std::int64_t cached_tokens = 0;          ///< Input read from the provider's prompt cache.
  std::int64_t cache_write_tokens = 0;     ///< Input written to the cache, every duration.
  std::int64_t cache_write_1h_tokens = 0;  ///< Of cache_write_tokens, those kept for an hour.
  std::int64_t audio_prompt_tokens = 0;
  std::int64_t reasoning_tokens = 0;
  std::int64_t audio_completion_tokens = 0;

  bool operator==(const TokenKinds&) const = default;
};

/// Each kind with its name: the name of its column wherever the store keeps it, and of its
/// member and column wherever it is shown (JSON, CSV), in this order.
inline constexpr std::array<std::pair<std::string_view, std::int64_t TokenKinds::*>, 6> kTokenKinds{
    {{"cached_tokens", &TokenKinds::cached_tokens},
     {"cache_write_tokens", &TokenKinds::cache_write_tokens},
     {"cache_write_1h_tokens", &TokenKinds::cache_write_1h_tokens},
     {"audio_prompt_tokens", &TokenKinds::audio_prompt_tokens},
     {"reasoning_tokens", &TokenKinds::reasoning_tokens},
     {"audio_completion_tokens", &TokenKinds::audio_completion_tokens}}};

struct CacheEntry;

/// The kinds of `u`; none when they do not fit in its totals (usage::consistent): an upstream's
/// counts are untrusted, and the row of such a usage is flagged estimated.
TokenKinds kindsOf(const usage::Counts& u);

/// The counts a cache entry was kept with, its kinds included.
usage::Counts countsOf(const CacheEntry& e);

/// ", <prefix>cached_tokens, <prefix>cache_write_tokens, …": the kinds' columns, to append to a
/// list of others.
std::string kindColumns(std::string_view prefix = {});

/// ", $<first>, $<first + 1>, …": the kinds' parameters, numbered from `first`.
std::string kindPlaceholders(std::size_t first);

/// The kinds from the row's columns `first` on.
TokenKinds readKinds(const Row& r, std::size_t first);

/// Appends the kinds as parameters.
void appendKinds(const TokenKinds& k, std::vector<Param>& params);

}  // namespace tollgate::store
