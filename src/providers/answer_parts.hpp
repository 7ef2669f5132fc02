// What the adapters that turn another wire's answers into ours write the same way: the error of
// a malformed answer, the time an answer is stamped with, a tool input as arguments text, and,
// for streams, a chunk of one delta, the first chunk (the assistant's role), a tool call's
// opening delta, and the stamping and SSE framing of a chunk.
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/error.hpp"
#include "core/json.hpp"
#include "openai/chat_response.hpp"
#include "openai/sse.hpp"

namespace tollgate::providers {

/// An UpstreamError: "the upstream answered with " `what`.
inline Error malformedAnswer(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

/// Parses a whole answer's `body` in place into `doc`, which must be an object; first keeps the
/// body as `c`'s raw response when `keep_response` (tollgate::include_raw_response). A
/// malformedAnswer otherwise.
inline std::optional<Error> parseAnswer(std::string& body, bool keep_response,
                                        rapidjson::Document& doc, openai::Completion& c) {
  if (keep_response) {
    c.raw_response_json = body;  // Before the in-place parse rewrites it.
  }
  if (json::parseInPlace(doc, body) || !doc.IsObject()) {
    return malformedAnswer("a body that is not a JSON object");
  }
  return std::nullopt;
}

/// A whole answer's message, gathered block by block: its text, its reasoning, its tool calls.
class MessageParts {
 public:
  void text(std::string_view t) {
    text_.append(t);
    has_text_ = true;
  }
  void reasoning(std::string_view r) {
    reasoning_.append(r);
    has_reasoning_ = true;
  }
  void toolCall(std::string_view id, std::string_view name, std::string arguments) {
    choice_.tool_calls.push_back(
        openai::ToolCall{std::string(id), std::string(name), std::move(arguments)});
  }

  /// The choice: `content` when text came or no tool call did, `reasoning_content` when
  /// reasoning came, and `finish_reason`.
  openai::Choice take(std::string_view finish_reason) && {
    if (has_reasoning_) {
      choice_.reasoning_content = std::move(reasoning_);
    }
    if (has_text_ || choice_.tool_calls.empty()) {
      choice_.content = std::move(text_);
    }
    choice_.finish_reason = std::string(finish_reason);
    return std::move(choice_);
  }

 private:
  openai::Choice choice_;
  std::string text_;
  std::string reasoning_;
  bool has_text_ = false;
  bool has_reasoning_ = false;
};

/// Now, in seconds since the Unix epoch (an answer's `created`).
inline std::int64_t unixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The `input` member of a tool block as a tool call's arguments text (`{}` when it is not an
/// object).
inline std::string inputText(const rapidjson::Value& block) {
  const rapidjson::Value* input = json::member(block, "input");
  return input != nullptr && input->IsObject() ? json::serialize(*input) : std::string("{}");
}

/// A chunk of one choice with `delta`.
inline openai::Chunk chunkWith(openai::ChoiceDelta delta) {
  openai::Chunk c;
  c.choices.push_back(std::move(delta));
  return c;
}

/// A stream's first chunk: `delta.role = "assistant"` and empty content.
inline openai::Chunk firstChunk() {
  openai::ChoiceDelta first;
  first.role = "assistant";
  first.content = "";
  return chunkWith(std::move(first));
}

/// The delta that opens tool call `index` (our count in the stream): its id, its name, and
/// empty arguments.
inline openai::Chunk toolCallStart(int index, std::string_view id, std::string_view name) {
  openai::ToolCallDelta call;
  call.index = index;
  call.id = std::string(id);
  call.name = std::string(name);
  call.arguments = "";
  openai::ChoiceDelta d;
  d.tool_calls.push_back(std::move(call));
  return chunkWith(std::move(d));
}

/// Stamps `c` with the stream's `id` and `created` (and `raw`, the upstream event, when the client
/// asked for raw responses), and appends it to `out` as an SSE data event.
inline void emitChunk(openai::Chunk& c, const openai::ResponseMeta& meta, const std::string& id,
                      std::int64_t created, const std::string& raw, std::string& out) {
  c.id = id;
  c.created = created;
  if (meta.include_raw_response) {
    c.raw_chunk_json = raw;
  }
  out += openai::sseData(openai::encodeChunk(c, meta));
}

}  // namespace tollgate::providers
