// Anthropic's usage object as our usage model: its three input counts (uncached, read from the
// prompt cache, written to it) and the split of the writes between the 5-minute and the 1-hour
// cache become OpenAI's prompt_tokens with the kinds inside it. Every count is untrusted.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>

#include "core/usage.hpp"

namespace tollgate::providers::anthropic {

/// The counts of Anthropic usage objects, read one after the other: a whole answer's one, or a
/// stream's (message_start's, then message_delta's, each count replacing the one before it).
class UsageReport {
 public:
  /// Reads the counts `usage` gives: input_tokens, cache_read_input_tokens,
  /// cache_creation_input_tokens, output_tokens, and cache_creation's ephemeral_5m_input_tokens
  /// and ephemeral_1h_input_tokens (in the object, one left out or null is 0). A member absent or
  /// null gives none; one that is not a count (json::countMember) makes the report untrusted.
  void read(const rapidjson::Value& usage);

  /// The usage: prompt_tokens = uncached + cache reads + cache writes (saturating, the kinds
  /// kept within it), cached_tokens = the reads, cache_write_tokens = the writes, of which
  /// cache_write_1h_tokens were for an hour (none without cache_creation: all 5-minute), and
  /// prompt_details set. nullopt when the report is untrusted, input_tokens or output_tokens
  /// never came, or cache_creation's split does not sum to cache_creation_input_tokens.
  std::optional<usage::Counts> counts() const;

 private:
  std::optional<std::int64_t> input_;
  std::int64_t cache_read_ = 0;
  std::int64_t cache_write_ = 0;
  std::optional<std::int64_t> write_5m_;  ///< cache_creation's split, when it came.
  std::optional<std::int64_t> write_1h_;
  std::optional<std::int64_t> output_;
  bool untrusted_ = false;
};

}  // namespace tollgate::providers::anthropic
