#include "core/usage.hpp"

#include <limits>
#include <optional>

namespace tollgate::usage {
namespace {

/// a + b + c, or nullopt when it does not fit.
std::optional<std::int64_t> sum(std::int64_t a, std::int64_t b, std::int64_t c = 0) {
  std::int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out) || __builtin_add_overflow(out, c, &out)) {
    return std::nullopt;
  }
  return out;
}

/// Whether the parts fit in `whole`: their sum neither overflows nor passes it.
bool within(std::optional<std::int64_t> parts, std::int64_t whole) {
  return parts && *parts <= whole;
}

}  // namespace

std::int64_t total(const Counts& c) {
  return sum(c.prompt_tokens, c.completion_tokens)
      .value_or(std::numeric_limits<std::int64_t>::max());
}

bool consistent(const Counts& c) {
  const bool non_negative = c.prompt_tokens >= 0 && c.completion_tokens >= 0 &&
                            c.cached_tokens >= 0 && c.cache_write_tokens >= 0 &&
                            c.cache_write_1h_tokens >= 0 && c.audio_prompt_tokens >= 0 &&
                            c.reasoning_tokens >= 0 && c.audio_completion_tokens >= 0;
  // Parts whose sum overflows do not fit, whatever the total: the charge subtracts them from it.
  return non_negative &&
         within(sum(c.cached_tokens, c.cache_write_tokens, c.audio_prompt_tokens),
                c.prompt_tokens) &&
         c.cache_write_1h_tokens <= c.cache_write_tokens &&
         within(sum(c.reasoning_tokens, c.audio_completion_tokens), c.completion_tokens);
}

bool hasKinds(const Counts& c) {
  return c.cached_tokens != 0 || c.cache_write_tokens != 0 || c.cache_write_1h_tokens != 0 ||
         c.audio_prompt_tokens != 0 || c.reasoning_tokens != 0 || c.audio_completion_tokens != 0;
}

}  // namespace tollgate::usage
