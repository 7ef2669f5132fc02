// Our chat-completions request as an Anthropic Messages API body (see anthropic.hpp for the
// choices where the wires differ).
#include <rapidjson/document.h>

#include <algorithm>
#include <vector>

#include "core/json.hpp"
#include "openai/fields.hpp"
#include "providers/anthropic.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

constexpr double kMaxTemperature = 1.0;
constexpr std::string_view kJsonObjectTool = "json_object";
constexpr std::string_view kDataPrefix = "data:";
constexpr std::string_view kBase64Marker = ";base64,";

enum class Role { None, User, Assistant };

bool isString(const Value* v) { return v != nullptr && v->IsString(); }

bool equals(const Value* v, std::string_view s) { return isString(v) && json::view(*v) == s; }

Error refuse(std::string_view param, std::string message) {
  return openai::invalidValue(param, std::move(message));
}

/// Writes one {"type":"text","text":…} block; empty text is skipped (Anthropic refuses it).
void textBlock(json::Writer& w, const Value& text) {
  if (text.GetStringLength() == 0) {
    return;
  }
  w.startObject();
  w.field("type", "text");
  w.key("text");
  w.value(text);
  w.endObject();
}

/// An image_url part as an image block: a data: URL inline (base64), any other URL by reference.
std::optional<Error> imageBlock(json::Writer& w, const Value& part) {
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
  w.endObject();
  return std::nullopt;
}

/// A message's `content` (a string or an array of parts) as content blocks.
std::optional<Error> contentBlocks(json::Writer& w, const Value* content, bool images) {
  if (content == nullptr || content->IsNull()) {
    return std::nullopt;
  }
  if (content->IsString()) {
    textBlock(w, *content);
    return std::nullopt;
  }
  if (!content->IsArray()) {
    return refuse("messages", "a message's content must be a string or an array of parts");
  }
  for (const Value& part : content->GetArray()) {
    const Value* type = json::member(part, "type");
    const Value* text = json::member(part, "text");
    const Value* refusal = json::member(part, "refusal");
    if (equals(type, "text") && isString(text)) {
      textBlock(w, *text);
    } else if (equals(type, "refusal") && isString(refusal)) {
      textBlock(w, *refusal);
    } else if (images && equals(type, "image_url")) {
      if (auto e = imageBlock(w, part)) {
        return e;
      }
    } else {
      return refuse("messages", "an Anthropic provider accepts text" +
                                    std::string(images ? " and image_url" : "") +
                                    " content parts only here");
    }
  }
  return std::nullopt;
}

/// Assistant tool_calls as tool_use blocks; the arguments must be a JSON object.
std::optional<Error> toolUseBlocks(json::Writer& w, const Value& calls) {
  if (!calls.IsArray()) {
    return refuse("messages", "tool_calls must be an array");
  }
  for (const Value& call : calls.GetArray()) {
    const Value* fn = json::member(call, "function");
    const Value* id = json::member(call, "id");
    const Value* name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    const Value* args = fn != nullptr ? json::member(*fn, "arguments") : nullptr;
    if (!isString(id) || !isString(name)) {
      return refuse("messages", "a tool call needs an id and a function name");
    }
    rapidjson::Document input;
    const std::string text = isString(args) ? std::string(json::view(*args)) : std::string();
    const bool blank = text.find_first_not_of(" \t\r\n") == std::string::npos;
    if (!blank && (json::parse(input, text) || !input.IsObject())) {
      return refuse("messages", "the arguments of tool call '" + std::string(json::view(*id)) +
                                    "' must be a JSON object to be sent to an Anthropic model");
    }
    w.startObject();
    w.field("type", "tool_use");
    w.key("id");
    w.value(*id);
    w.key("name");
    w.value(*name);
    w.key("input");
    if (blank) {
      w.startObject();
      w.endObject();
    } else {
      w.value(input);
    }
    w.endObject();
  }
  return std::nullopt;
}

/// A tool message as a tool_result block.
std::optional<Error> toolResultBlock(json::Writer& w, const Value& message) {
  const Value* id = json::member(message, "tool_call_id");
  if (!isString(id)) {
    return refuse("messages", "a tool message needs tool_call_id, a string");
  }
  w.startObject();
  w.field("type", "tool_result");
  w.key("tool_use_id");
  w.value(*id);
  const Value* content = json::member(message, "content");
  if (content != nullptr && content->IsString()) {
    w.key("content");
    w.value(*content);
  } else if (content != nullptr && content->IsArray()) {
    w.key("content");
    w.startArray();
    if (auto e = contentBlocks(w, content, true)) {
      return e;
    }
    w.endArray();
  }
  w.endObject();
  return std::nullopt;
}

/// Whether a user or assistant message yields at least one block (Anthropic refuses empty
/// messages; an assistant's `content: ""` beside its tool calls is common).
bool hasBlocks(const Value& message) {
  const Value* content = json::member(message, "content");
  const Value* calls = json::member(message, "tool_calls");
  if (calls != nullptr && calls->IsArray() && !calls->Empty()) {
    return true;
  }
  if (content == nullptr || content->IsNull()) {
    return false;
  }
  if (content->IsString()) {
    return content->GetStringLength() > 0;
  }
  if (!content->IsArray()) {
    return true;  // Refused when written.
  }
  return std::any_of(content->Begin(), content->End(), [](const Value& part) {
    const Value* text = json::member(part, "text");
    return !isString(text) || text->GetStringLength() > 0;
  });
}

/// Writes `messages`, merging consecutive messages of one role (Anthropic requires turns to
/// alternate; tool results travel in user turns). System and developer texts are collected.
std::optional<Error> writeMessages(json::Writer& w, const Value& messages,
                                   std::vector<const Value*>& system) {
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
    if (role != "tool" && !hasBlocks(m)) {
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
      if (auto e = toolResultBlock(w, m)) {
        return e;
      }
      continue;
    }
    if (auto e = contentBlocks(w, json::member(m, "content"), next == Role::User)) {
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
std::optional<Error> writeSystem(json::Writer& w, const std::vector<const Value*>& system) {
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
    if (auto e = contentBlocks(w, content, false)) {
      return e;
    }
  }
  w.endArray();
  return std::nullopt;
}

std::optional<Error> writeTools(json::Writer& w, const Value& tools) {
  w.key("tools");
  w.startArray();
  for (const Value& tool : tools.GetArray()) {
    const Value* fn = json::member(tool, "function");
    const Value* name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!equals(json::member(tool, "type"), "function") || !isString(name)) {
      return refuse("tools", "an Anthropic provider accepts function tools with a name only");
    }
    w.startObject();
    w.key("name");
    w.value(*name);
    if (const Value* d = json::member(*fn, "description"); isString(d)) {
      w.key("description");
      w.value(*d);
    }
    w.key("input_schema");
    if (const Value* p = json::member(*fn, "parameters"); p != nullptr && p->IsObject()) {
      w.value(*p);
    } else {
      w.startObject();
      w.field("type", "object");
      w.endObject();
    }
    w.endObject();
  }
  w.endArray();
  return std::nullopt;
}

std::optional<Error> writeToolChoice(json::Writer& w, const Value* choice, bool parallel) {
  std::string_view type = "auto";
  const Value* name = nullptr;
  if (choice != nullptr && choice->IsString()) {
    const std::string_view c = json::view(*choice);
    type = c == "required" ? "any" : c == "none" ? "none" : "auto";
  } else if (choice != nullptr && choice->IsObject()) {
    const Value* fn = json::member(*choice, "function");
    name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!isString(name)) {
      return refuse("tool_choice",
                    "tool_choice must name a function: {\"type\":\"function\","
                    "\"function\":{\"name\":…}}");
    }
    type = "tool";
  } else if (parallel) {
    return std::nullopt;  // Anthropic's default is auto, with parallel tool use.
  }
  w.key("tool_choice");
  w.startObject();
  w.field("type", type);
  if (name != nullptr) {
    w.key("name");
    w.value(*name);
  }
  if (!parallel && type != "none") {
    w.field("disable_parallel_tool_use", true);
  }
  w.endObject();
  return std::nullopt;
}

/// response_format json_schema / json_object as one forced tool.
void writeJsonTool(json::Writer& w, const Value& format) {
  const Value* spec = json::member(format, "json_schema");
  const Value* name = spec != nullptr ? json::member(*spec, "name") : nullptr;
  const Value* schema = spec != nullptr ? json::member(*spec, "schema") : nullptr;
  const std::string_view tool = isString(name) ? json::view(*name) : kJsonObjectTool;
  w.key("tools");
  w.startArray();
  w.startObject();
  w.field("name", tool);
  w.field("description", "Answer with JSON that matches this schema.");
  w.key("input_schema");
  if (schema != nullptr && schema->IsObject()) {
    w.value(*schema);
  } else {
    w.startObject();
    w.field("type", "object");
    w.endObject();
  }
  w.endObject();
  w.endArray();
  w.key("tool_choice");
  w.startObject();
  w.field("type", "tool");
  w.field("name", tool);
  w.endObject();
}

}  // namespace

std::string messagesPath(const config::Provider& provider) {
  return provider.api_base.path + "/messages";
}

bool wantsJson(const openai::ChatRequest& request) {
  const Value* format = json::member(request.body, "response_format");
  const Value* type = format != nullptr ? json::member(*format, "type") : nullptr;
  return equals(type, "json_schema") || equals(type, "json_object");
}

Result<std::string> buildMessagesBody(const openai::ChatRequest& request,
                                      const config::Provider& provider) {
  const Value& body = request.body;
  json::Writer w;
  w.startObject();
  w.field("model", provider.model);
  w.field("max_tokens", request.max_completion_tokens.value_or(provider.default_max_tokens));
  const Value* messages = json::member(body, "messages");
  if (messages == nullptr || !messages->IsArray()) {
    return refuse("messages", "messages must be an array");
  }
  std::vector<const Value*> system;
  if (auto e = writeMessages(w, *messages, system)) {
    return std::move(*e);
  }
  if (auto e = writeSystem(w, system)) {
    return std::move(*e);
  }
  const Value* tools = json::member(body, "tools");
  const bool has_tools = tools != nullptr && tools->IsArray() && !tools->Empty();
  if (wantsJson(request)) {
    if (has_tools) {
      return refuse("response_format",
                    "an Anthropic provider serves response_format json_schema and json_object "
                    "with a forced tool, so they cannot be combined with tools");
    }
    writeJsonTool(w, body["response_format"]);
  } else if (has_tools) {
    if (auto e = writeTools(w, *tools)) {
      return std::move(*e);
    }
    const Value* parallel = json::member(body, "parallel_tool_calls");
    const bool allow_parallel = parallel == nullptr || !parallel->IsBool() || parallel->GetBool();
    if (auto e = writeToolChoice(w, json::member(body, "tool_choice"), allow_parallel)) {
      return std::move(*e);
    }
  }
  if (const Value* stop = json::member(body, "stop"); stop != nullptr && stop->IsArray()) {
    w.key("stop_sequences");
    w.value(*stop);
  }
  if (const Value* t = json::member(body, "temperature"); t != nullptr && t->IsNumber()) {
    w.field("temperature", std::min(t->GetDouble(), kMaxTemperature));
  }
  if (const Value* p = json::member(body, "top_p"); p != nullptr && p->IsNumber()) {
    w.key("top_p");
    w.value(*p);
  }
  if (const Value* user = json::member(body, "user"); isString(user)) {
    w.key("metadata");
    w.startObject();
    w.key("user_id");
    w.value(*user);
    w.endObject();
  }
  if (request.stream) {
    w.field("stream", true);
  }
  w.endObject();
  return w.take();
}

}  // namespace tollgate::providers::anthropic
