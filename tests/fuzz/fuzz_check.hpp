// The invariant checks the fuzz targets use: a violated invariant is a finding like a crash.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/usage.hpp"

namespace tollgate::fuzz {

inline void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

/// `text` is one valid JSON value in valid UTF-8, as everything the gateway answers must be.
inline void checkJson(const std::string& text) {
  check(text::isValidUtf8(text));
  rapidjson::Document doc;
  check(!json::parse(doc, text));
}

/// A usage the gateway would price: counts of every kind, never negative, and a total that is
/// their sum or, when that overflows, the largest int64 (an upstream's own total is never
/// believed).
inline void checkUsage(const std::optional<usage::Counts>& counts) {
  if (!counts) {
    return;
  }
  check(counts->prompt_tokens >= 0 && counts->completion_tokens >= 0 &&
        counts->cached_tokens >= 0 && counts->cache_write_tokens >= 0 &&
        counts->cache_write_1h_tokens >= 0 && counts->audio_prompt_tokens >= 0 &&
        counts->reasoning_tokens >= 0 && counts->audio_completion_tokens >= 0);
  std::int64_t sum = 0;
  const bool overflows =
      __builtin_add_overflow(counts->prompt_tokens, counts->completion_tokens, &sum);
  check(usage::total(*counts) == (overflows ? INT64_MAX : sum));
}

}  // namespace tollgate::fuzz
