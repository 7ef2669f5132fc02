// Pieces the adapters of translated wires share beyond answer_parts.hpp and chat_turns.hpp: a
// pooled parse of one stream event, a client's tool calls read whole, and TranslatedExchange.
#pragma once

#include <rapidjson/document.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/result.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "providers/adapter.hpp"
#include "providers/answer_parts.hpp"
#include "providers/chat_turns.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers {

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

/// One tool call of a client's assistant message, read to be sent on another wire.
struct ClientToolCall {
  std::string_view id;
  std::string_view name;
  rapidjson::Document arguments;  ///< Always a JSON object.
};

/// An assistant message's `tool_calls`, each with an id, a function name and arguments that are
/// a JSON object (blank: `{}`), or a 400 invalid_value (param `messages`) naming `model` (e.g.
/// "an Anthropic model") as what the arguments could not be sent to.
Result<std::vector<ClientToolCall>> clientToolCalls(const rapidjson::Value& calls,
                                                    std::string_view model);

/// A tool call's `arguments` text as a JSON object in `into`: blank text is `{}`. False when the
/// text is not a JSON object.
bool argumentsObject(std::string_view text, rapidjson::Document& into);

/// A chat attempt on a translated wire: its body is built before anything is sent (a refusal
/// sends nothing), and a whole answer, once parsed into our completion, is kept and encoded here.
class TranslatedExchange : public Exchange {
 protected:
  TranslatedExchange(const config::Provider& provider, const openai::ResponseMeta& meta,
                     bool stream, Result<std::string> body);

  /// The request with the built body (moved out: call once), or the refusal.
  Result<UpstreamRequest> requestWith(std::string path);
  /// The parts of the answer to keep verbatim, as the client asked.
  KeepRaw keep() const { return {meta_.include_raw_usage, meta_.include_raw_response}; }
  /// A whole answer: its usage and model kept, encoded on our wire (or its error).
  Result<std::string> encode(Result<openai::Completion> c);
  /// The model a whole answer named, or `streamed` (the decoder's) for a stream.
  std::string_view answerModel(std::string_view streamed) const {
    return stream_ ? streamed : std::string_view(model_);
  }

  const config::Provider& provider_;
  const openai::ResponseMeta& meta_;
  const bool stream_;
  const std::int64_t created_;

 private:
  Result<std::string> body_;
  std::string model_;
};

}  // namespace tollgate::providers
