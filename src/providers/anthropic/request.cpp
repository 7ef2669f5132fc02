// Our chat-completions request as an Anthropic Messages API body (see anthropic.hpp for the
// choices where the wires differ).
#include <rapidjson/document.h>

#include <algorithm>
#include <vector>

#include "core/json.hpp"
#include "openai/fields.hpp"
#include "providers/anthropic/anthropic.hpp"
#include "providers/anthropic/cache_control.hpp"
#include "providers/anthropic/tools.hpp"
#include "providers/wire.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

constexpr double kMaxTemperature = 1.0;
constexpr std::string_view kDataPrefix = "data:";
constexpr std::string_view kBase64Marker = ";base64,";

enum class Role { None, User, Assistant };

Error refuse(std::string_view param, std::string message) {
  return openai::invalidValue(param, std::move(message));
}

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
  const Value* image = json::member(part, "image_url");
  const Value* url = image != nullptr && image->IsObject() ? json::member(*image, "url") : image;
  if (!isString(url)) {
    return refuse("messages", "an image_url part needs image_url.url, a string");
  }
  const std::string_view u = json::view(*url);
  w.startObject();
  w.field("type", "image");
  w.key("source");
  w.startObject();
  if (u.substr(0, kDataPrefix.size()) == kDataPrefix) {
    const std::size_t marker = u.find(kBase64Marker);
    if (marker == std::string_view::npos) {
      return refuse("messages", "an image data: URL must be base64 (data:<media type>;base64,…)");
    }
    w.field("type", "base64");
    w.field("media_type", u.substr(kDataPrefix.size(), marker - kDataPrefix.size()));
    w.field("data", u.substr(marker + kBase64Marker.size()));
  } else {
    w.field("type", "url");
    w.field("url", u);
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
  if (content == nullptr || content->IsNull()) {
    return std::nullopt;
  }
  if (content->IsString()) {
    return textBlock(w, *content, nullptr, breakpoints);
  }
  if (!content->IsArray()) {
    return refuse("messages", "a message's content must be a string or an array of parts");
  }
  for (const Value& part : content->GetArray()) {
    const Value* type = json::member(part, "type");
    const Value* text = json::member(part, "text");
    const Value* refusal = json::member(part, "refusal");
    std::optional<Error> e;
    if (equals(type, "text") && isString(text)) {
      e = textBlock(w, *text, &part, breakpoints);
    } else if (equals(type, "refusal") && isString(refusal)) {
      e = textBlock(w, *refusal, &part, breakpoints);
    } else if (images && equals(type, "image_url")) {
      e = imageBlock(w, part, breakpoints);
    } else {
      return refuse("messages", "an Anthropic provider accepts text" +
                                    std::string(images ? " and image_url" : "") +
                                    " content parts only here");
    }
    if (e) {
      return e;
    }
  }
  return std::nullopt;
}

/// Assistant tool_calls as tool_use blocks; the arguments must be a JSON object.
std::optional<Error> toolUseBlocks(json::Writer& w, const Value& calls) {
  auto read = clientToolCalls(calls, "an Anthropic model");
  if (!read) {
    return read.error();
  }
  for (const ClientToolCall& call : *read) {
    w.startObject();
    w.field("type", "tool_use");
    w.field("id", call.id);
    w.field("name", call.name);
    w.key("input");
    w.value(call.arguments);
    w.endObject();
  }
  return std::nullopt;
}

/// A tool message as a tool_result block.
std::optional<Error> toolResultBlock(json::Writer& w, const Value& message,
                                     CacheBreakpoints& breakpoints) {
  const Value* id = json::member(message, "tool_call_id");
  if (!isString(id)) {
    return refuse("messages", "a tool message needs tool_call_id, a string");
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

/// Writes `messages`, merging consecutive messages of one role (Anthropic requires turns to
/// alternate; tool results travel in user turns). System and developer texts are collected.
std::optional<Error> writeMessages(json::Writer& w, const Value& messages,
                                   std::vector<const Value*>& system,
                                   CacheBreakpoints& breakpoints) {
  Role open = Role::None;
  w.key("messages");
  w.startArray();
  for (const Value& m : messages.GetArray()) {
    const Value* r = json::member(m, "role");
    const std::string_view role = isString(r) ? json::view(*r) : std::string_view();
    if (role == "system" || role == "developer") {
      system.push_back(json::member(m, "content"));
      continue;
    }
    Role next = Role::None;
    if (role == "user" || role == "tool") {
      next = Role::User;
    } else if (role == "assistant") {
      next = Role::Assistant;
    } else {
      return refuse("messages", "an Anthropic provider does not accept messages of role '" +
                                    std::string(role) + "'");
    }
    if (role != "tool" && !hasContent(m)) {  // Anthropic refuses empty messages.
      continue;
    }
    if (next != open) {
      if (open != Role::None) {
        w.endArray();
        w.endObject();
      }
      w.startObject();
      w.field("role", next == Role::User ? "user" : "assistant");
      w.key("content");
      w.startArray();
      open = next;
    }
    if (role == "tool") {
      if (auto e = toolResultBlock(w, m, breakpoints)) {
        return e;
      }
      continue;
    }
    if (auto e = contentBlocks(w, json::member(m, "content"), next == Role::User, breakpoints)) {
      return e;
    }
    if (const Value* calls = json::member(m, "tool_calls"); calls != nullptr && !calls->IsNull()) {
      if (auto e = toolUseBlocks(w, *calls)) {
        return e;
      }
    }
  }
  if (open != Role::None) {
    w.endArray();
    w.endObject();
  }
  w.endArray();
  return std::nullopt;
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
  const auto max_tokens = positiveOutputLimit(request, provider, "an Anthropic provider");
  if (!max_tokens) {
    return max_tokens.error();
  }
  w.field("max_tokens", *max_tokens);
  const Value* messages = json::member(body, "messages");
  if (messages == nullptr || !messages->IsArray()) {
    return refuse("messages", "messages must be an array");
  }
  std::vector<const Value*> system;
  CacheBreakpoints breakpoints;
  if (auto e = writeMessages(w, *messages, system, breakpoints)) {
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
