// Small pieces the adapters of translated wires (Anthropic's, Gemini's) share when they read an
// upstream's answers and a client's tool calls.
#pragma once

#include <rapidjson/document.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace tollgate::providers {

/// 502 upstream_error: "the upstream answered with <what>".
Error malformedAnswer(std::string what);

/// Seconds since the Unix epoch: an answer's `created`.
std::int64_t unixSeconds();

/// One stream event's JSON, parsed in place (`data` is modified and must outlive it) into a
/// small pool: most events need no allocation.
class PooledEvent {
 public:
  explicit PooledEvent(std::string& data);
  PooledEvent(const PooledEvent&) = delete;
  PooledEvent& operator=(const PooledEvent&) = delete;

  /// Whether the event is a JSON object.
  bool isObject() const { return object_; }
  const rapidjson::Document& doc() const { return doc_; }

 private:
  static constexpr std::size_t kPoolBytes = 4096;
  std::array<char, kPoolBytes> pool_;
  rapidjson::MemoryPoolAllocator<> allocator_;
  rapidjson::Document doc_;
  bool object_ = false;
};

/// A tool call's `arguments` text as a JSON object in `into`: blank text is `{}`. False when the
/// text is not a JSON object.
bool argumentsObject(std::string_view text, rapidjson::Document& into);

}  // namespace tollgate::providers
