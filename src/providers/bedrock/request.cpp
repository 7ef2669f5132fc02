// Our chat-completions request as a Converse body (docs/bedrock.md lists the choices where the
// wires differ).
#include <rapidjson/document.h>

#include <array>
#include <vector>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/fields.hpp"
#include "providers/bedrock/bedrock.hpp"

namespace tollgate::providers::bedrock {
namespace {

using rapidjson::Value;

constexpr std::string_view kDataPrefix = "data:";
constexpr std::string_view kBase64Marker = ";base64,";

Error refuse(std::string_view param, std::string message) {
  return openai::invalidValue(param, std::move(message));
}

bool isString(const Value* v) { return v != nullptr && v->IsString(); }

bool equals(const Value* v, std::string_view s) { return isString(v) && json::view(*v) == s; }

/// A request's cache points, counted against Bedrock's limit.
class CachePoints {
 public:
  /// Whether `owner` (a content part or a tool) has a cache_control that is not null: a cache
  /// point after the block it becomes. InvalidValue (param `param`) for one that is not
  /// {"type":"ephemeral"} (an optional ttl "5m", Bedrock's default duration, is accepted).
  Result<bool> marked(const Value& owner, std::string_view param) const {
    const Value* control = json::member(owner, "cache_control");
    if (control == nullptr || control->IsNull()) {
      return false;
    }
    const Value* ttl = control->IsObject() ? json::member(*control, "ttl") : nullptr;
    const bool valid = control->IsObject() && equals(json::member(*control, "type"), "ephemeral") &&
                       (ttl == nullptr || ttl->IsNull() || equals(ttl, "5m")) &&
                       control->MemberCount() == (ttl != nullptr ? 2U : 1U);
    if (!valid) {
      return refuse(param,
                    "cache_control must be {\"type\":\"ephemeral\"} (a Bedrock cache point; "
                    "an optional \"ttl\" must be \"5m\")");
    }
    return true;
  }

  /// Writes a `{"cachePoint":{"type":"default"}}` block; InvalidValue (param `param`) for one
  /// more than kMaxCachePoints.
  std::optional<Error> write(json::Writer& w, std::string_view param) {
    if (++count_ > kMaxCachePoints) {
      return refuse(param, "a Bedrock model takes at most " + std::to_string(kMaxCachePoints) +
                               " cache_control breakpoints in a request");
    }
    w.startObject();
    w.key("cachePoint");
    w.startObject();
    w.field("type", "default");
    w.endObject();
    w.endObject();
    return std::nullopt;
  }

  /// A cache point after the block `owner` became, when it is marked.
  std::optional<Error> after(json::Writer& w, const Value& owner, std::string_view param) {
    auto m = marked(owner, param);
    if (!m) {
      return std::move(m).error();
    }
    return *m ? write(w, param) : std::nullopt;
  }

 private:
  int count_ = 0;
};

/// Converse's image format for a media type, or "" for one it has none for.
std::string_view imageFormat(std::string_view media_type) {
  if (media_type == "image/png") {
    return "png";
  }
  if (media_type == "image/jpeg" || media_type == "image/jpg") {
    return "jpeg";
  }
  if (media_type == "image/gif") {
    return "gif";
  }
  if (media_type == "image/webp") {
    return "webp";
  }
  return "";
}

/// An image_url part as an image block: only a base64 data: URL (Converse takes bytes or S3
/// locations; the gateway never fetches a client's URL).
std::optional<Error> imageBlock(json::Writer& w, const Value& part) {
  const Value* image = json::member(part, "image_url");
  const Value* url = image != nullptr && image->IsObject() ? json::member(*image, "url") : image;
  if (!isString(url)) {
    return refuse("messages", "an image_url part needs image_url.url, a string");
  }
  const std::string_view u = json::view(*url);
  const std::size_t marker = u.find(kBase64Marker);
  if (!u.starts_with(kDataPrefix) || marker == std::string_view::npos) {
    return refuse("messages",
                  "a Bedrock provider takes images as base64 data: URLs only "
                  "(data:image/png;base64,…); the gateway does not fetch image URLs");
  }
  const std::string_view format =
      imageFormat(u.substr(kDataPrefix.size(), marker - kDataPrefix.size()));
  if (format.empty()) {
    return refuse("messages", "a Bedrock provider takes png, jpeg, gif and webp images only");
  }
  w.startObject();
  w.key("image");
  w.startObject();
  w.field("format", format);
  w.key("source");
  w.startObject();
  w.field("bytes", u.substr(marker + kBase64Marker.size()));
  w.endObject();
  w.endObject();
  w.endObject();
  return std::nullopt;
}

void textBlock(json::Writer& w, std::string_view text) {
  w.startObject();
  w.field("text", text);
  w.endObject();
}

/// A message's `content` (a string or an array of parts) as content blocks; empty texts are
/// skipped (Converse refuses blank text blocks).
std::optional<Error> contentBlocks(json::Writer& w, const Value* content, bool images,
                                   CachePoints& cache, bool* deferred = nullptr) {
  if (content == nullptr || content->IsNull()) {
    return std::nullopt;
  }
  if (content->IsString()) {
    if (content->GetStringLength() > 0) {
      textBlock(w, json::view(*content));
    }
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
      if (text->GetStringLength() > 0) {
        textBlock(w, json::view(*text));
      }
    } else if (equals(type, "refusal") && isString(refusal)) {
      textBlock(w, json::view(*refusal));
    } else if (images && equals(type, "image_url")) {
      if (auto e = imageBlock(w, part)) {
        return e;
      }
    } else {
      return refuse("messages", "a Bedrock provider accepts text" +
                                    std::string(images ? " and image_url" : "") +
                                    " content parts only here");
    }
    if (deferred != nullptr) {
      auto m = cache.marked(part, "messages");
      if (!m) {
        return std::move(m).error();
      }
      *deferred = *deferred || *m;
    } else if (auto e = cache.after(w, part, "messages")) {
      return e;
    }
  }
  return std::nullopt;
}

/// Assistant tool_calls as toolUse blocks; the arguments must be a JSON object.
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
                                    "' must be a JSON object to be sent to a Bedrock model");
    }
    w.startObject();
    w.key("toolUse");
    w.startObject();
    w.field("toolUseId", json::view(*id));
    w.field("name", json::view(*name));
    w.key("input");
    if (blank) {
      w.startObject();
      w.endObject();
    } else {
      w.value(input);
    }
    w.endObject();
    w.endObject();
  }
  return std::nullopt;
}

/// A tool message as a toolResult block; a cache_control on its parts is one cache point after
/// the block (a tool result's content takes none).
std::optional<Error> toolResultBlock(json::Writer& w, const Value& message, CachePoints& cache) {
  const Value* id = json::member(message, "tool_call_id");
  if (!isString(id)) {
    return refuse("messages", "a tool message needs tool_call_id, a string");
  }
  w.startObject();
  w.key("toolResult");
  w.startObject();
  w.field("toolUseId", json::view(*id));
  w.key("content");
  w.startArray();
  const Value* content = json::member(message, "content");
  bool point = false;
  if (content != nullptr && content->IsString()) {
    textBlock(w, json::view(*content));  // Converse takes an empty result's text.
  } else if (auto e = contentBlocks(w, content, true, cache, &point)) {
    return e;
  }
  w.endArray();
  w.endObject();
  w.endObject();
  return point ? cache.write(w, "messages") : std::nullopt;
}

/// Whether a user or assistant message yields at least one block.
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
  for (const Value& part : content->GetArray()) {
    const Value* text = json::member(part, "text");
    if (!isString(text) || text->GetStringLength() > 0) {
      return true;
    }
  }
  return false;
}

enum class Role { None, User, Assistant };

/// Writes `messages`, merging consecutive messages of one role (Converse requires turns to
/// alternate; tool results travel in user turns). System and developer contents are collected.
std::optional<Error> writeMessages(json::Writer& w, const Value& messages,
                                   std::vector<const Value*>& system, CachePoints& cache) {
  Role open = Role::None;
  w.key("messages");
  w.startArray();
  for (const Value& m : messages.GetArray()) {
    const Value* r = json::member(m, "role");
    const std::string_view role = isString(r) ? json::view(*r) : std::string_view();
    if (role == "system" || role == "developer") {
      system.push_back(&m);
      continue;
    }
    Role next = Role::None;
    if (role == "user" || role == "tool") {
      next = Role::User;
    } else if (role == "assistant") {
      next = Role::Assistant;
    } else {
      return refuse("messages", "a Bedrock provider does not accept messages of role '" +
                                    text::printable(role, 32) + "'");
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
      if (auto e = toolResultBlock(w, m, cache)) {
        return e;
      }
      continue;
    }
    if (auto e = contentBlocks(w, json::member(m, "content"), next == Role::User, cache)) {
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

std::optional<Error> writeSystem(json::Writer& w, const std::vector<const Value*>& system,
                                 CachePoints& cache) {
  if (system.empty()) {
    return std::nullopt;
  }
  w.key("system");
  w.startArray();
  for (const Value* m : system) {
    if (auto e = contentBlocks(w, json::member(*m, "content"), false, cache)) {
      return e;
    }
  }
  w.endArray();
  return std::nullopt;
}

std::optional<Error> writeToolChoice(json::Writer& w, const Value* choice) {
  if (choice == nullptr || choice->IsNull() || equals(choice, "auto")) {
    return std::nullopt;  // Converse's default.
  }
  w.key("toolChoice");
  w.startObject();
  if (equals(choice, "required")) {
    w.key("any");
    w.startObject();
    w.endObject();
  } else if (choice->IsObject()) {
    const Value* fn = json::member(*choice, "function");
    const Value* name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!isString(name)) {
      return refuse("tool_choice",
                    "tool_choice must name a function: {\"type\":\"function\","
                    "\"function\":{\"name\":…}}");
    }
    w.key("tool");
    w.startObject();
    w.field("name", json::view(*name));
    w.endObject();
  } else {
    return refuse("tool_choice",
                  "a Bedrock provider takes tool_choice \"auto\", \"required\" or a named "
                  "function (Converse cannot be told not to use the tools it is given)");
  }
  w.endObject();
  return std::nullopt;
}

std::optional<Error> writeTools(json::Writer& w, const Value& body, CachePoints& cache) {
  const Value* tools = json::member(body, "tools");
  if (tools == nullptr || !tools->IsArray() || tools->Empty()) {
    return std::nullopt;  // tool_choice without tools is not sent.
  }
  w.key("toolConfig");
  w.startObject();
  w.key("tools");
  w.startArray();
  for (const Value& tool : tools->GetArray()) {
    const Value* fn = json::member(tool, "function");
    const Value* name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!equals(json::member(tool, "type"), "function") || !isString(name)) {
      return refuse("tools", "a Bedrock provider accepts function tools with a name only");
    }
    w.startObject();
    w.key("toolSpec");
    w.startObject();
    w.field("name", json::view(*name));
    if (const Value* d = json::member(*fn, "description"); isString(d)) {
      w.field("description", json::view(*d));
    }
    w.key("inputSchema");
    w.startObject();
    w.key("json");
    if (const Value* p = json::member(*fn, "parameters"); p != nullptr && p->IsObject()) {
      w.value(*p);
    } else {
      w.startObject();
      w.field("type", "object");
      w.endObject();
    }
    w.endObject();
    w.endObject();
    w.endObject();
    if (auto e = cache.after(w, tool, "tools")) {
      return e;
    }
  }
  w.endArray();
  if (auto e = writeToolChoice(w, json::member(body, "tool_choice"))) {
    return e;
  }
  w.endObject();
  return std::nullopt;
}

void writeInferenceConfig(json::Writer& w, const Value& body, std::int64_t max_tokens) {
  w.key("inferenceConfig");
  w.startObject();
  w.field("maxTokens", max_tokens);
  if (const Value* t = json::member(body, "temperature"); t != nullptr && t->IsNumber()) {
    w.field("temperature", std::min(t->GetDouble(), 1.0));  // Converse's range is 0 to 1.
  }
  if (const Value* p = json::member(body, "top_p"); p != nullptr && p->IsNumber()) {
    w.field("topP", p->GetDouble());
  }
  if (const Value* stop = json::member(body, "stop"); stop != nullptr && stop->IsArray()) {
    w.key("stopSequences");
    w.value(*stop);
  }
  w.endObject();
}

}  // namespace

std::string conversePath(const config::Provider& provider, bool stream) {
  return provider.api_base.path + "/model/" + text::percentEncode(provider.model) +
         (stream ? "/converse-stream" : "/converse");
}

Result<std::string> buildConverseBody(const openai::ChatRequest& request,
                                      const config::Provider& provider) {
  const Value& body = request.body;
  if (const Value* f = json::member(body, "response_format");
      f != nullptr && f->IsObject() && !equals(json::member(*f, "type"), "text")) {
    return refuse("response_format",
                  "a Bedrock provider does not take response_format json_schema or json_object");
  }
  const std::int64_t max_tokens = config::outputTokenLimit(
      request.max_completion_tokens, provider.max_output_tokens, provider.default_max_tokens);
  if (max_tokens == 0) {
    return refuse("max_tokens",
                  "a Bedrock provider generates at least 1 token: max_tokens and "
                  "max_completion_tokens must be at least 1 for this model");
  }
  const Value* messages = json::member(body, "messages");
  if (messages == nullptr || !messages->IsArray()) {
    return refuse("messages", "messages must be an array");
  }
  json::Writer w;
  w.startObject();
  std::vector<const Value*> system;
  CachePoints cache;
  if (auto e = writeMessages(w, *messages, system, cache)) {
    return std::move(*e);
  }
  if (auto e = writeSystem(w, system, cache)) {
    return std::move(*e);
  }
  writeInferenceConfig(w, body, max_tokens);
  if (auto e = writeTools(w, body, cache)) {
    return std::move(*e);
  }
  w.endObject();
  return w.take();
}

}  // namespace tollgate::providers::bedrock
