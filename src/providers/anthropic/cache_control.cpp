#include "providers/anthropic/cache_control.hpp"

#include <string>

#include "openai/fields.hpp"
#include "providers/anthropic/tools.hpp"

namespace tollgate::providers::anthropic {

std::optional<Error> CacheBreakpoints::write(json::Writer& w, const rapidjson::Value& owner,
                                             std::string_view param) {
  const rapidjson::Value* control = json::member(owner, "cache_control");
  if (control == nullptr || control->IsNull()) {
    return std::nullopt;
  }
  const rapidjson::Value* ttl = control->IsObject() ? json::member(*control, "ttl") : nullptr;
  const bool has_ttl = ttl != nullptr && !ttl->IsNull();
  const bool valid = control->IsObject() && equals(json::member(*control, "type"), "ephemeral") &&
                     (!has_ttl || equals(ttl, "5m") || equals(ttl, "1h")) &&
                     control->MemberCount() == (ttl != nullptr ? 2U : 1U);
  if (!valid) {
    return openai::invalidValue(param,
                                "cache_control must be {\"type\":\"ephemeral\"}, with an optional "
                                "\"ttl\" of \"5m\" or \"1h\"");
  }
  if (++count_ > kMaxCacheBreakpoints) {
    return openai::invalidValue(param, "an Anthropic model takes at most " +
                                           std::to_string(kMaxCacheBreakpoints) +
                                           " cache_control breakpoints in a request");
  }
  w.key("cache_control");
  w.startObject();
  w.field("type", "ephemeral");
  if (has_ttl) {
    copy(w, "ttl", *ttl);
  }
  w.endObject();
  return std::nullopt;
}

}  // namespace tollgate::providers::anthropic
