#include "providers/anthropic/usage.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

#include "core/json.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();

/// Whether `object` has `name` with a value other than null.
bool given(const Value& object, std::string_view name) {
  const Value* v = json::member(object, name);
  return v != nullptr && !v->IsNull();
}

}  // namespace

void UsageReport::read(const Value& usage) {
  // A count given replaces the one before it; one that is not a count is untrusted.
  const auto take = [&](const Value& object, std::string_view name, auto& into) {
    if (!given(object, name)) {
      return;
    }
    const auto n = json::countMember(object, name);
    untrusted_ = untrusted_ || !n;
    into = n.value_or(0);
  };
  take(usage, "input_tokens", input_);
  take(usage, "cache_read_input_tokens", cache_read_);
  take(usage, "cache_creation_input_tokens", cache_write_);
  take(usage, "output_tokens", output_);
  if (!given(usage, "cache_creation")) {
    return;
  }
  const Value& split = *json::member(usage, "cache_creation");
  if (!split.IsObject()) {
    untrusted_ = true;
    return;
  }
  write_5m_ = 0;
  write_1h_ = 0;
  take(split, "ephemeral_5m_input_tokens", write_5m_);
  take(split, "ephemeral_1h_input_tokens", write_1h_);
}

std::optional<usage::Counts> UsageReport::counts() const {
  if (untrusted_ || !input_ || !output_) {
    return std::nullopt;
  }
  std::int64_t split = 0;
  if (write_5m_ &&
      (__builtin_add_overflow(*write_5m_, *write_1h_, &split) || split != cache_write_)) {
    return std::nullopt;  // The two durations are not the writes: which is true is not known.
  }
  usage::Counts c;
  c.cached_tokens = cache_read_;
  // Near int64's limit (no true answer's counts are) the kinds stay within a saturated prompt.
  c.cache_write_tokens = std::min(cache_write_, kMaxCount - cache_read_);
  c.cache_write_1h_tokens = std::min(write_1h_.value_or(0), c.cache_write_tokens);
  if (__builtin_add_overflow(*input_, c.cached_tokens + c.cache_write_tokens, &c.prompt_tokens)) {
    c.prompt_tokens = kMaxCount;
  }
  c.completion_tokens = *output_;
  c.prompt_details = true;
  return c;
}

}  // namespace tollgate::providers::anthropic
