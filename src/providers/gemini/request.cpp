// Our chat-completions request as a Gemini generateContent body (docs/gemini.md: the mapping,
// what is dropped and what is refused before anything is sent).
#include <rapidjson/document.h>

#include <map>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/fields.hpp"
#include "providers/gemini/gemini.hpp"
#include "providers/wire.hpp"

namespace tollgate::providers::gemini {
namespace {

using rapidjson::Value;

std::string_view stringOf(const Value* v) {
  return v != nullptr && v->IsString() ? json::view(*v) : std::string_view();
}

bool isText(const Value* v) { return v != nullptr && v->IsString(); }

/// The parts of a request: one turn of contents is open at a time; consecutive messages of one
/// role share it.
class Contents {
 public:
  explicit Contents(json::Writer& w) : w_(w) {}

  /// Opens a turn of `role` ("user" or "model") unless one is open.
  void turn(std::string_view role) {
    if (role == open_) {
      return;
    }
    close();
    w_.startObject();
    w_.field("role", role);
    w_.key("parts");
    w_.startArray();
    open_ = role;
  }
  void close() {
    if (!open_.empty()) {
      w_.endArray();
      w_.endObject();
      open_ = {};
    }
  }

 private:
  json::Writer& w_;
  std::string_view open_;
};

void textPart(json::Writer& w, std::string_view text) {
  w.startObject();
  w.field("text", text);
  w.endObject();
}

/// An image_url part as inlineData; only data: URLs (the gateway fetches nothing, and Gemini
/// fetches only its own files' URIs).
std::optional<Error> imagePart(json::Writer& w, const Value& part) {
  const auto image = imageSource(part);
  if (!image) {
    return image.error();
  }
  if (!image->inline_data) {
    return openai::invalidValue(
        "messages",
        "a Gemini provider takes images as data: URLs only (data:<media type>;base64,…); "
        "it does not fetch http(s) URLs, and the gateway fetches none");
  }
  w.startObject();
  w.key("inlineData");
  w.startObject();
  w.field("mimeType", image->media_type);
  w.field("data", image->base64);
  w.endObject();
  w.endObject();
  return std::nullopt;
}

/// A message's `content` (a string or parts) as parts; empty text is skipped.
std::optional<Error> contentParts(json::Writer& w, const Value* content, bool images) {
  if (content == nullptr || content->IsNull()) {
    return std::nullopt;
  }
  if (content->IsString()) {
    if (content->GetStringLength() > 0) {
      textPart(w, json::view(*content));
    }
    return std::nullopt;
  }
  if (!content->IsArray()) {
    return openai::invalidValue("messages",
                                "a message's content must be a string or an array of parts");
  }
  for (const Value& part : content->GetArray()) {
    const std::string_view type = stringOf(json::member(part, "type"));
    const Value* text = json::member(part, type == "refusal" ? "refusal" : "text");
    if ((type == "text" || type == "refusal") && isText(text)) {
      if (text->GetStringLength() > 0) {
        textPart(w, json::view(*text));
      }
    } else if (images && type == "image_url") {
      if (auto e = imagePart(w, part)) {
        return e;
      }
    } else {
      return openai::invalidValue("messages", "a Gemini provider accepts text" +
                                                  std::string(images ? " and image_url" : "") +
                                                  " content parts only here");
    }
  }
  return std::nullopt;
}

/// Assistant tool_calls as functionCall parts; remembers each id's function name for the tool
/// messages that answer them.
std::optional<Error> functionCalls(json::Writer& w, const Value& calls,
                                   std::map<std::string, std::string, std::less<>>& names) {
  auto read = clientToolCalls(calls, "a Gemini model");
  if (!read) {
    return read.error();
  }
  for (const ClientToolCall& call : *read) {
    names[std::string(call.id)] = std::string(call.name);
    w.startObject();
    if (const std::size_t mark = call.id.find(kSignatureMark); mark != std::string_view::npos) {
      w.field("thoughtSignature", call.id.substr(mark + kSignatureMark.size()));
    }
    w.key("functionCall");
    w.startObject();
    w.field("name", call.name);
    w.key("args");
    w.value(call.arguments);
    w.endObject();
    w.endObject();
  }
  return std::nullopt;
}

/// A tool message as a functionResponse part, named after the call it answers. Its content, a
/// JSON object, is the response; any other text is {"content": text}.
std::optional<Error> functionResponse(
    json::Writer& w, const Value& message,
    const std::map<std::string, std::string, std::less<>>& names) {
  const Value* id = json::member(message, "tool_call_id");
  if (!isText(id)) {
    return openai::invalidValue("messages", "a tool message needs tool_call_id, a string");
  }
  const auto name = names.find(json::view(*id));
  if (name == names.end()) {
    return openai::invalidValue("messages",
                                "tool message '" + text::printable(json::view(*id), 64) +
                                    "' answers no tool call of an earlier assistant message");
  }
  std::string text;
  const Value* content = json::member(message, "content");
  if (isText(content)) {
    text = std::string(json::view(*content));
  } else if (content != nullptr && content->IsArray()) {
    for (const Value& part : content->GetArray()) {
      const Value* t = json::member(part, "text");
      if (stringOf(json::member(part, "type")) != "text" || !isText(t)) {
        return openai::invalidValue("messages",
                                    "a Gemini provider accepts text parts only in tool messages");
      }
      text.append(json::view(*t));
    }
  }
  rapidjson::Document parsed;
  const bool object = !json::parse(parsed, text) && parsed.IsObject();
  w.startObject();
  w.key("functionResponse");
  w.startObject();
  w.field("name", name->second);
  w.key("response");
  if (object) {
    w.value(parsed);
  } else {
    w.startObject();
    w.field("content", text);
    w.endObject();
  }
  w.endObject();
  w.endObject();
  return std::nullopt;
}

/// Writes `contents`; system and developer messages are collected for systemInstruction.
std::optional<Error> writeContents(json::Writer& w, const Value& messages,
                                   std::vector<const Value*>& system) {
  std::map<std::string, std::string, std::less<>> names;  // Tool call ids to function names.
  Contents turns(w);
  w.key("contents");
  w.startArray();
  for (const Value& m : messages.GetArray()) {
    const std::string_view role = stringOf(json::member(m, "role"));
    const Value* content = json::member(m, "content");
    if (role == "system" || role == "developer") {
      system.push_back(content);
      continue;
    }
    if (role == "tool") {
      turns.turn("user");
      if (auto e = functionResponse(w, m, names)) {
        return e;
      }
      continue;
    }
    if (role != "user" && role != "assistant") {
      return openai::invalidValue(
          "messages",
          "a Gemini provider does not accept messages of role '" + text::printable(role, 32) + "'");
    }
    const Value* calls = json::member(m, "tool_calls");
    if (!yieldsBlocks(m)) {
      continue;  // Gemini refuses a turn without parts.
    }
    turns.turn(role == "user" ? "user" : "model");
    if (auto e = contentParts(w, content, role == "user")) {
      return e;
    }
    if (calls != nullptr && !calls->IsNull()) {
      if (auto e = functionCalls(w, *calls, names)) {
        return e;
      }
    }
  }
  turns.close();
  w.endArray();
  return std::nullopt;
}

std::optional<Error> writeSystem(json::Writer& w, const std::vector<const Value*>& system) {
  if (system.empty()) {
    return std::nullopt;
  }
  w.key("systemInstruction");
  w.startObject();
  w.key("parts");
  w.startArray();
  for (const Value* content : system) {
    if (auto e = contentParts(w, content, false)) {
      return e;
    }
  }
  w.endArray();
  w.endObject();
  return std::nullopt;
}

std::optional<Error> writeTools(json::Writer& w, const Value& body) {
  const Value* tools = json::member(body, "tools");
  if (tools == nullptr || !tools->IsArray() || tools->Empty()) {
    return std::nullopt;  // tool_choice without tools is not sent.
  }
  w.key("tools");
  w.startArray();
  w.startObject();
  w.key("functionDeclarations");
  w.startArray();
  for (const Value& tool : tools->GetArray()) {
    const Value* fn = json::member(tool, "function");
    const Value* name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (stringOf(json::member(tool, "type")) != "function" || !isText(name)) {
      return openai::invalidValue("tools",
                                  "a Gemini provider accepts function tools with a name only");
    }
    w.startObject();
    w.field("name", json::view(*name));
    if (const Value* d = json::member(*fn, "description"); isText(d)) {
      w.field("description", json::view(*d));
    }
    if (const Value* p = json::member(*fn, "parameters"); p != nullptr && p->IsObject()) {
      w.key("parameters");
      w.value(*p);
    }
    w.endObject();
  }
  w.endArray();
  w.endObject();
  w.endArray();
  const Value* choice = json::member(body, "tool_choice");
  if (choice == nullptr || choice->IsNull()) {
    return std::nullopt;
  }
  std::string_view mode;
  const Value* name = nullptr;
  if (choice->IsString()) {
    const std::string_view c = json::view(*choice);
    mode = c == "required" ? "ANY" : c == "none" ? "NONE" : "AUTO";
  } else {
    const Value* fn = choice->IsObject() ? json::member(*choice, "function") : nullptr;
    name = fn != nullptr ? json::member(*fn, "name") : nullptr;
    if (!isText(name)) {
      return openai::invalidValue("tool_choice",
                                  "tool_choice must name a function: {\"type\":\"function\","
                                  "\"function\":{\"name\":…}}");
    }
    mode = "ANY";
  }
  w.key("toolConfig");
  w.startObject();
  w.key("functionCallingConfig");
  w.startObject();
  w.field("mode", mode);
  if (name != nullptr) {
    w.key("allowedFunctionNames");
    w.startArray();
    w.string(json::view(*name));
    w.endArray();
  }
  w.endObject();
  w.endObject();
  return std::nullopt;
}

/// generationConfig: the output limit, sampling, stops and JSON output.
std::optional<Error> writeGenerationConfig(json::Writer& w, const openai::ChatRequest& request,
                                           std::int64_t max_tokens) {
  const Value& body = request.body;
  w.key("generationConfig");
  w.startObject();
  w.field("maxOutputTokens", max_tokens);
  const auto number = [&](std::string_view from, std::string_view to) {
    if (const Value* v = json::member(body, from); v != nullptr && v->IsNumber()) {
      w.key(to);
      w.value(*v);
    }
  };
  number("temperature", "temperature");  // Gemini's range is OpenAI's, 0 to 2.
  number("top_p", "topP");
  number("presence_penalty", "presencePenalty");
  number("frequency_penalty", "frequencyPenalty");
  if (const Value* seed = json::member(body, "seed"); seed != nullptr && seed->IsInt()) {
    w.key("seed");
    w.value(*seed);
  }
  if (const Value* stop = json::member(body, "stop"); stop != nullptr && stop->IsArray()) {
    w.key("stopSequences");
    w.value(*stop);
  }
  const Value* format = json::member(body, "response_format");
  const std::string_view type =
      format != nullptr ? stringOf(json::member(*format, "type")) : std::string_view();
  if (type == "json_object" || type == "json_schema") {
    w.field("responseMimeType", "application/json");
    const Value* spec = json::member(*format, "json_schema");
    const Value* schema = spec != nullptr ? json::member(*spec, "schema") : nullptr;
    if (type == "json_schema") {
      if (schema == nullptr || !schema->IsObject()) {
        return openai::invalidValue("response_format",
                                    "response_format json_schema needs json_schema.schema");
      }
      w.key("responseSchema");
      w.value(*schema);
    }
  }
  w.endObject();
  return std::nullopt;
}

}  // namespace

std::string modelPath(const config::Provider& provider, std::string_view method) {
  return provider.api_base.path + "/models/" + text::percentEncode(provider.model) + ":" +
         std::string(method);
}

Result<std::string> buildGenerateBody(const openai::ChatRequest& request,
                                      const config::Provider& provider) {
  const Value& body = request.body;
  const auto turns = turnsToSend(request, provider, "a Gemini provider");
  if (!turns) {
    return turns.error();
  }
  json::Writer w;
  w.startObject();
  std::vector<const Value*> system;
  if (auto e = writeContents(w, *turns->messages, system)) {
    return std::move(*e);
  }
  if (auto e = writeSystem(w, system)) {
    return std::move(*e);
  }
  if (auto e = writeTools(w, body)) {
    return std::move(*e);
  }
  if (auto e = writeGenerationConfig(w, request, turns->max_tokens)) {
    return std::move(*e);
  }
  w.endObject();
  return w.take();
}

}  // namespace tollgate::providers::gemini
