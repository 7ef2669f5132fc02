// What an answer used, as one model of every kind of count an upstream reports: each adapter
// fills it from its wire (OpenAI's details objects, Anthropic's three input counts), billing
// prices it kind by kind (core/prices.hpp), and the response writes it back in the client's
// shape. Every count comes from an upstream and is untrusted until `consistent` says otherwise.
#pragma once

#include <cstdint>

namespace tollgate::usage {

/// Token counts of an answer. The totals are OpenAI's: `prompt_tokens` is every input token
/// (uncached, read from a cache, written to one, audio), `completion_tokens` every output token
/// (reasoning and audio included). The kinds below are parts of those totals.
struct Counts {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;          ///< Input read from the provider's prompt cache.
  std::int64_t cache_write_tokens = 0;     ///< Input written to the cache, every duration.
  std::int64_t cache_write_1h_tokens = 0;  ///< Of cache_write_tokens, those kept for an hour.
  std::int64_t audio_prompt_tokens = 0;    ///< Input audio (uncached).
  std::int64_t reasoning_tokens = 0;       ///< Output spent thinking (priced as output).
  std::int64_t audio_completion_tokens = 0;
  /// Whether the upstream sent the details objects (OpenAI sends both, zeros included): they are
  /// written back when it did, or when a count in them is not zero.
  bool prompt_details = false;
  bool completion_details = false;

  bool operator==(const Counts&) const = default;
};

/// Counts of two totals and no details.
inline Counts of(std::int64_t prompt_tokens, std::int64_t completion_tokens) {
  Counts c;
  c.prompt_tokens = prompt_tokens;
  c.completion_tokens = completion_tokens;
  return c;
}

/// prompt_tokens + completion_tokens, saturating rather than overflowing.
std::int64_t total(const Counts& c);

/// Whether the kinds fit in their totals: every count non-negative; cached + cache writes +
/// audio within the prompt; the hour's writes within the writes; reasoning + audio within the
/// completion. An upstream's counts that are not consistent are not priced kind by kind
/// (prices.hpp: charge).
bool consistent(const Counts& c);

/// Whether any count beyond the two totals is not zero.
bool hasKinds(const Counts& c);

}  // namespace tollgate::usage
