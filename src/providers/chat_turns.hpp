// What the adapters of wires with alternating turns of content blocks (Anthropic's Messages,
// Bedrock's Converse) share when they translate our chat messages: the walk that merges
// consecutive messages of one role into one turn (tool results travel in user turns, system and
// developer messages are set apart), whether a message yields any block, and a tool call's
// parts, its arguments parsed as the JSON object both wires require.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include "config/config.hpp"
#include "core/error.hpp"
#include "core/json.hpp"
#include "core/result.hpp"
#include "openai/chat_request.hpp"

namespace tollgate::providers {

/// What every translated wire's body starts from: the output limit it sends, for models that
/// generate at least one token (config::outputTokenLimit), and the request's messages.
/// InvalidValue (param "max_tokens", naming `wire`) for a limit of 0, or (param "messages") when
/// messages is not an array.
struct Turns {
  std::int64_t max_tokens = 0;
  const rapidjson::Value* messages = nullptr;  ///< An array.
};
Result<Turns> turnsToSend(const openai::ChatRequest& request, const config::Provider& provider,
                          std::string_view wire);

/// The image of an image_url part: a base64 data: URL's media type and data, or another URL.
struct ImageSource {
  std::string_view url;      ///< As the client sent it.
  bool inline_data = false;  ///< A data: URL: `media_type` and `base64` are its parts.
  std::string_view media_type;
  std::string_view base64;
};

/// The image of `part` (`image_url.url`, or `image_url` itself as a string); InvalidValue (param
/// "messages") when it names none, or is a data: URL that is not base64 with a media type.
Result<ImageSource> imageSource(const rapidjson::Value& part);

/// Whether a user or assistant message yields at least one block: tool calls, or content that
/// is not null, not an empty string, and not only empty text parts. Content of another type is
/// true (it is refused when written).
bool yieldsBlocks(const rapidjson::Value& message);

/// One part of a message's content: a text (a text part's, a refusal part's, or a string
/// content's whole), or an image_url part (`text` null). `owner` is the part's object (null
/// for a string content), where a cache_control would be.
struct ContentPart {
  const rapidjson::Value* text = nullptr;
  const rapidjson::Value* owner = nullptr;
};

/// Calls `each` on every part of `content` in order (null content has none), stopping at its
/// first error. InvalidValue (param "messages", naming `wire`) for content that is not a string
/// or an array, or a part other than text, refusal and (when `images`) image_url.
std::optional<Error> forEachPart(
    const rapidjson::Value* content, std::string_view wire, bool images,
    const std::function<std::optional<Error>(const ContentPart&)>& each);

/// An assistant's tool call: its id and name, and its arguments parsed.
struct ToolCallParts {
  const rapidjson::Value* id = nullptr;
  const rapidjson::Value* name = nullptr;
  rapidjson::Document input;  ///< The arguments' object; null when they were blank.

  /// Writes the arguments' object (`{}` for blank arguments).
  void writeInput(json::Writer& w) const;
};

/// How one wire writes what a turn holds, each into the open turn's content array.
struct TurnWriters {
  /// Takes a system or developer message (written elsewhere, e.g. a top-level `system`).
  std::function<void(const rapidjson::Value& message)> system;
  /// A tool message's result block.
  std::function<std::optional<Error>(const rapidjson::Value& message)> tool_result;
  /// A user or assistant message's `content` (null, a string or parts); `user` for a user's.
  std::function<std::optional<Error>(const rapidjson::Value* content, bool user)> content;
  /// One of an assistant's tool calls, after its content.
  std::function<void(const ToolCallParts& call)> tool_call;
};

/// Writes `"messages":[{"role":…,"content":[…]},…]` for our `messages`: consecutive messages of
/// one turn (a tool message is a user's) share one object; user and assistant messages that
/// yield no block are skipped. InvalidValue (param "messages", naming `wire`, e.g. "an Anthropic
/// provider") for another role, tool_calls that are not an array, a tool call without an id and
/// a function name, or whose arguments are neither blank nor a JSON object.
std::optional<Error> writeTurns(json::Writer& w, const rapidjson::Value& messages,
                                std::string_view wire, const TurnWriters& writers);

/// Reads `call` into `out`: InvalidValue (param "messages") without an id and a function name,
/// or when the arguments are neither blank nor a JSON object (naming `wire`, "a Bedrock model").
std::optional<Error> readToolCall(const rapidjson::Value& call, std::string_view wire,
                                  ToolCallParts& out);

}  // namespace tollgate::providers
