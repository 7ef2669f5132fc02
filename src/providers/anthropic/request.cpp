// Our chat-completions request as an Anthropic Messages API body (see anthropic.hpp for the
// choices where the wires differ).
#include <rapidjson/document.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "core/json.hpp"
#include "openai/fields.hpp"
#include "providers/anthropic/anthropic.hpp"
#include "providers/anthropic/cache_control.hpp"
#include "providers/anthropic/tools.hpp"
#include "providers/chat_turns.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

constexpr double kMaxTemperature = 1.0;

/// Writes one {"type":"text","text":…} block with the cache_control of `part` (when a part
/// holds it); empty text is skipped, breakpoint and all (Anthropic refuses an empty block).
std::optional<Error> textBlock(json::Writer& w, const Value& text, const Value* part,
                               CacheBreakpoints& breakpoints) {
  if (text.GetStringLength() == 0) {
    return std::nullopt;
  }
  w.startObject();
  w.field("type", "text");
  copy(w, "text", text);
  if (part != nullptr) {
    if (auto e = breakpoints.write(w, *part, "messages")) {
      return e;
    }
  }
  w.endObject();
  return std::nullopt;
}

/// An image_url part as an image block: a data: URL inline (base64), any other URL by reference.
std::optional<Error> imageBlock(json::Writer& w, const Value& part, CacheBreakpoints& breakpoints) {
  const auto image = imageSource(part);
  if (!image) {
    return image.error();
  }
  w.startObject();
  w.field("type", "image");
  w.key("source");
  w.startObject();
  if (image->inline_data) {
    w.field("type", "base64");
    w.field("media_type", image->media_type);
    w.field("data", image->base64);
  } else {
    w.field("type", "url");
    w.field("url", image->url);
  }
  w.endObject();
  if (auto e = breakpoints.write(w, part, "messages")) {
    return e;
  }
  w.endObject();
  return std::nullopt;
}

/// A message's `content` (a string or an array of parts) as content blocks.
std::optional<Error> contentBlocks(json::Writer& w, const Value* content, bool images,
                                   CacheBreakpoints& breakpoints) {
  return forEachPart(content, "an Anthropic provider", images, [&](const ContentPart& part) {
    return part.text != nullptr ? textBlock(w, *part.text, part.owner, breakpoints)
                                : imageBlock(w, *part.owner, breakpoints);
  });
}

/// An assistant's tool call as a tool_use block.
void toolUseBlock(json::Writer& w, const ToolCallParts& call) {
  w.startObject();
  w.field("type", "tool_use");
  copy(w, "id", *call.id);
  copy(w, "name", *call.name);
  w.key("input");
  call.writeInput(w);
  w.endObject();
}

/// A tool message as a tool_result block.
std::optional<Error> toolResultBlock(json::Writer& w, const Value& message,
                                     CacheBreakpoints& breakpoints) {
  const Value* id = json::member(message, "tool_call_id");
  if (!isString(id)) {
    return openai::invalidValue("messages", "a tool message needs tool_call_id, a string");
  }
  w.startObject();
  w.field("type", "tool_result");
  copy(w, "tool_use_id", *id);
  const Value* content = json::member(message, "content");
  if (content != nullptr && content->IsString()) {
    copy(w, "content", *content);
  } else if (content != nullptr && content->IsArray()) {
    w.key("content");
    w.startArray();
    if (auto e = contentBlocks(w, content, true, breakpoints)) {
      return e;
    }
    w.endArray();
  }
  w.endObject();
  return std::nullopt;
}

/// Writes `messages` (Anthropic requires turns to alternate, and refuses empty messages).
/// System and developer texts are collected.
std::optional<Error> writeMessages(json::Writer& w, const Value& messages,
                                   std::vector<const Value*>& system,
                                   CacheBreakpoints& breakpoints) {
  return writeTurns(
      w, messages, "an Anthropic provider",
      {.system = [&](const Value& m) { system.push_back(json::member(m, "content")); },
       .tool_result = [&](const Value& m) { return toolResultBlock(w, m, breakpoints); },
       .content = [&](const Value* content,
                      bool user) { return contentBlocks(w, content, user, breakpoints); },
       .tool_call = [&](const ToolCallParts& call) { toolUseBlock(w, call); }});
}

/// The top-level `system`: the one system text as a string, otherwise text blocks in order.
std::optional<Error> writeSystem(json::Writer& w, const std::vector<const Value*>& system,
                                 CacheBreakpoints& breakpoints) {
  if (system.empty()) {
    return std::nullopt;
  }
  w.key("system");
  if (system.size() == 1 && isString(system[0])) {
    w.value(*system[0]);
    return std::nullopt;
  }
  w.startArray();
  for (const Value* content : system) {
    if (auto e = contentBlocks(w, content, false, breakpoints)) {
      return e;
    }
  }
  w.endArray();
  return std::nullopt;
}

}  // namespace

std::string messagesPath(const config::Provider& provider) {
  return provider.api_base.path + "/messages";
}

Result<std::string> buildMessagesBody(const openai::ChatRequest& request,
                                      const config::Provider& provider) {
  const Value& body = request.body;
  json::Writer w;
  w.startObject();
  w.field("model", provider.model);
  const auto turns = turnsToSend(request, provider, "an Anthropic provider");
  if (!turns) {
    return turns.error();
  }
  w.field("max_tokens", turns->max_tokens);
  std::vector<const Value*> system;
  CacheBreakpoints breakpoints;
  if (auto e = writeMessages(w, *turns->messages, system, breakpoints)) {
    return std::move(*e);
  }
  if (auto e = writeSystem(w, system, breakpoints)) {
    return std::move(*e);
  }
  if (auto e = writeTools(w, body, breakpoints)) {
    return std::move(*e);
  }
  if (const Value* stop = json::member(body, "stop"); stop != nullptr && stop->IsArray()) {
    copy(w, "stop_sequences", *stop);
  }
  if (const Value* t = json::member(body, "temperature"); t != nullptr && t->IsNumber()) {
    w.field("temperature", std::min(t->GetDouble(), kMaxTemperature));
  }
  if (const Value* p = json::member(body, "top_p"); p != nullptr && p->IsNumber()) {
    copy(w, "top_p", *p);
  }
  if (const Value* user = json::member(body, "user"); isString(user)) {
    w.key("metadata");
    w.startObject();
    copy(w, "user_id", *user);
    w.endObject();
  }
  if (request.stream) {
    w.field("stream", true);
  }
  w.endObject();
  return w.take();
}

}  // namespace tollgate::providers::anthropic
