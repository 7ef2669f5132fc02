// A client's prompt-cache breakpoints on the OpenAI wire (`cache_control`, as LiteLLM and Portkey
// take it, on a content part or a tool) as Anthropic's `cache_control` on the same block: checked,
// and counted against Anthropic's limit per request.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "core/json.hpp"

namespace tollgate::providers::anthropic {

/// The most cache breakpoints Anthropic takes in one request.
inline constexpr int kMaxCacheBreakpoints = 4;

/// The breakpoints of one request, written block by block.
class CacheBreakpoints {
 public:
  /// Writes `"cache_control":{"type":"ephemeral"[,"ttl":…]}` into the open block when `owner` (a
  /// content part or a tool) has a cache_control member that is not null. InvalidValue (param
  /// `param`) when it is not an object of type "ephemeral" with an optional ttl of "5m" or "1h"
  /// and nothing else, or when it is one more than kMaxCacheBreakpoints.
  std::optional<Error> write(json::Writer& w, const rapidjson::Value& owner,
                             std::string_view param);

 private:
  int count_ = 0;
};

}  // namespace tollgate::providers::anthropic
