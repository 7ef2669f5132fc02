// The token kinds (store.hpp: TokenKinds): taken from a usage and given back to one, and their
// SQL (columns, read from a row and bound as parameters in kTokenKinds' order), shared by the
// spend log, its aggregates and the cache.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/usage.hpp"
#include "store/connection.hpp"
#include "store/store.hpp"

namespace tollgate::store {

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
