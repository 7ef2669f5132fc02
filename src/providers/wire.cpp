#include "providers/wire.hpp"

#include <chrono>

#include "core/json.hpp"

namespace tollgate::providers {

Error malformedAnswer(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

std::int64_t unixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PooledEvent::PooledEvent(std::string& data)
    : allocator_(pool_.data(), pool_.size()), doc_(&allocator_) {
  object_ = !json::parseInPlace(doc_, data) && doc_.IsObject();
}

bool argumentsObject(std::string_view text, rapidjson::Document& into) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    into.SetObject();
    return true;
  }
  return !json::parse(into, std::string(text)) && into.IsObject();
}

}  // namespace tollgate::providers
