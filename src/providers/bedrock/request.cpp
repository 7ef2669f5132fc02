// Our chat-completions request as a Converse body (docs/bedrock.md lists the choices where the
// wires differ).
#include <rapidjson/document.h>

#include <array>
#include <vector>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/fields.hpp"
#include "providers/bedrock/bedrock.hpp"
#include "providers/chat_turns.hpp"

namespace tollgate::providers::bedrock {
namespace {

using rapidjson::Value;

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
      return openai::invalidValue(
          param,
          "cache_control must be {\"type\":\"ephemeral\"} (a Bedrock cache point; "
          "an optional \"ttl\" must be \"5m\")");
    }
    return true;
  }

  /// Writes a `{"cachePoint":{"type":"default"}}` block; InvalidValue (param `param`) for one
  /// more than kMaxCachePoints.
  std::optional<Error> write(json::Writer& w, std::string_view param) {
    if (++count_ > kMaxCachePoints) {
      return openai::invalidValue(param, "a Bedrock model takes at most " +
                                             std::to_string(kMaxCachePoints) +
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
  const auto image = imageSource(part);
  if (!image) {
    return image.error();
  }
  if (!image->inline_data) {
    return openai::invalidValue("messages",
                                "a Bedrock provider takes images as base64 data: URLs only "
                                "(data:image/png;base64,…); the gateway does not fetch image URLs");
  }
  const std::string_view format = imageFormat(image->media_type);
  if (format.empty()) {
    return openai::invalidValue("messages",
                                "a Bedrock provider takes png, jpeg, gif and webp images only");
  }
  w.startObject();
  w.key("image");
  w.startObject();
  w.field("format", format);
  w.key("source");
  w.startObject();
  w.field("bytes", image->base64);
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
  return forEachPart(content, "a Bedrock provider", images,
                     [&](const ContentPart& part) -> std::optional<Error> {
                       if (part.text == nullptr) {
                         if (auto e = imageBlock(w, *part.owner)) {
                           return e;
                         }
                       } else if (part.text->GetStringLength() > 0) {
                         textBlock(w, json::view(*part.text));
                       } else {
                         return std::nullopt;  // Not sent, nor its cache point.
                       }
                       if (part.owner == nullptr) {
                         return std::nullopt;
                       }
                       if (deferred == nullptr) {
                         return cache.after(w, *part.owner, "messages");
                       }
                       auto marked = cache.marked(*part.owner, "messages");
                       if (!marked) {
                         return std::move(marked).error();
                       }
                       *deferred = *deferred || *marked;
                       return std::nullopt;
                     });
}

/// An assistant's tool call as a toolUse block.
void toolUseBlock(json::Writer& w, const ToolCallParts& call) {
  w.startObject();
  w.key("toolUse");
  w.startObject();
  w.field("toolUseId", json::view(*call.id));
  w.field("name", json::view(*call.name));
  w.key("input");
  call.writeInput(w);
  w.endObject();
  w.endObject();
}

/// A tool message as a toolResult block; a cache_control on its parts is one cache point after
/// the block (a tool result's content takes none).
std::optional<Error> toolResultBlock(json::Writer& w, const Value& message, CachePoints& cache) {
  const Value* id = json::member(message, "tool_call_id");
  if (!isString(id)) {
    return openai::invalidValue("messages", "a tool message needs tool_call_id, a string");
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

/// Writes `messages` (Converse requires turns to alternate). System and developer messages are
/// collected.
std::optional<Error> writeMessages(json::Writer& w, const Value& messages,
                                   std::vector<const Value*>& system, CachePoints& cache) {
  TurnWriters writers;
  writers.system = [&](const Value& m) { system.push_back(&m); };
  writers.tool_result = [&](const Value& m) { return toolResultBlock(w, m, cache); };
  writers.content = [&](const Value* content, bool user) {
    return contentBlocks(w, content, user, cache);
  };
  writers.tool_call = [&](const ToolCallParts& call) { toolUseBlock(w, call); };
  return writeTurns(w, messages, "a Bedrock provider", writers);
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

/// `messages`, then `system` (what system and developer messages said).
std::optional<Error> writeConversation(json::Writer& w, const Value& messages, CachePoints& cache) {
  std::vector<const Value*> system;
  auto e = writeMessages(w, messages, system, cache);
  return e ? e : writeSystem(w, system, cache);
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
      return openai::invalidValue("tool_choice",
                                  "tool_choice must name a function: {\"type\":\"function\","
                                  "\"function\":{\"name\":…}}");
    }
    w.key("tool");
    w.startObject();
    w.field("name", json::view(*name));
    w.endObject();
  } else {
    return openai::invalidValue(
        "tool_choice",
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
      return openai::invalidValue("tools",
                                  "a Bedrock provider accepts function tools with a name only");
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
    return openai::invalidValue(
        "response_format",
        "a Bedrock provider does not take response_format json_schema or json_object");
  }
  const auto turns = turnsToSend(request, provider, "a Bedrock provider");
  if (!turns) {
    return turns.error();
  }
  json::Writer w;
  w.startObject();
  CachePoints cache;
  if (auto e = writeConversation(w, *turns->messages, cache)) {
    return std::move(*e);
  }
  writeInferenceConfig(w, body, turns->max_tokens);
  if (auto e = writeTools(w, body, cache)) {
    return std::move(*e);
  }
  w.endObject();
  return w.take();
}

}  // namespace tollgate::providers::bedrock
