// The tool side of an Anthropic request: function tools, tool_choice, and JSON output
// (response_format json_schema / json_object) as one forced tool; and the small value writers
// the request builder shares with it.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "core/json.hpp"
#include "providers/anthropic/cache_control.hpp"

namespace tollgate::providers::anthropic {

/// Whether `v` is present and a string.
inline bool isString(const rapidjson::Value* v) { return v != nullptr && v->IsString(); }

/// Whether `v` is the string `s`.
inline bool equals(const rapidjson::Value* v, std::string_view s) {
  return isString(v) && json::view(*v) == s;
}

/// Writes `"key":<v>` (a client's value, copied as it is).
inline void copy(json::Writer& w, std::string_view key, const rapidjson::Value& v) {
  w.key(key);
  w.value(v);
}

/// Writes `tools` and `tool_choice` for the request `body`: the client's function tools (each
/// with its cache_control, counted in `breakpoints`), or the forced tool of a JSON
/// response_format. InvalidValue for what Anthropic cannot be asked.
std::optional<Error> writeTools(json::Writer& w, const rapidjson::Value& body,
                                CacheBreakpoints& breakpoints);

}  // namespace tollgate::providers::anthropic
