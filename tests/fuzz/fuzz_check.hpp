// The invariant checks the fuzz targets use: a violated invariant is a finding like a crash.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "core/usage.hpp"
#include "openai/sse.hpp"

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

/// Every `data: …\n\n` event of `out` (an adapter's streamed chunks) holds valid JSON.
inline void checkEvents(const std::string& out) {
  std::size_t at = 0;
  while (at < out.size()) {
    check(out.compare(at, 6, "data: ") == 0);
    const std::size_t end = out.find("\n\n", at);
    check(end != std::string::npos);
    checkJson(out.substr(at + 6, end - at - 6));
    at = end + 2;
  }
}

/// Usage an adapter read: valid totals, and cache reads and writes within the prompt.
inline void checkAdapterUsage(const std::optional<usage::Counts>& counts) {
  checkUsage(counts);
  check(!counts || usage::consistent(*counts));
}

/// Feeds `events` one by one to an adapter's stream decoder (`event(name, data, out, usage)`):
/// each step's chunks are valid JSON and its usage can be priced, `after(decoder)` checks what
/// else it must; an error ends the stream as a valid error body, as does the stream's end.
template <class Decoder, class After>
void checkStream(Decoder& decoder, std::vector<openai::SseEvent>& events, After after) {
  std::optional<usage::Counts> usage;
  for (openai::SseEvent& ev : events) {
    std::string out;
    auto step = decoder.event(ev.event, ev.data, out, usage);
    checkAdapterUsage(usage);
    after(decoder);
    checkEvents(out);
    if (!step) {
      checkJson(errorBody(step.error()));
      return;
    }
    if (*step) {
      return;
    }
  }
}

/// The roles of a translated body's `messages` alternate between "user" and "assistant".
inline void checkTurns(const rapidjson::Value& messages) {
  check(messages.IsArray());
  std::string_view previous;
  for (const rapidjson::Value& m : messages.GetArray()) {
    const std::string_view role = json::stringMember(m, "role").value_or("");
    check((role == "user" || role == "assistant") && role != previous);
    previous = role;
  }
}

}  // namespace tollgate::fuzz
