#include "providers/chat_turns.hpp"

#include <algorithm>
#include <string>

#include "openai/fields.hpp"

namespace tollgate::providers {
namespace {

using rapidjson::Value;

bool isString(const Value* v) { return v != nullptr && v->IsString(); }

/// The blocks of one message of role `role` ("user", "assistant" or "tool").
std::optional<Error> turnBlocks(const Value& m, std::string_view role, std::string_view wire,
                                const TurnWriters& writers) {
  if (role == "tool") {
    return writers.tool_result(m);
  }
  if (auto e = writers.content(json::member(m, "content"), role == "user")) {
    return e;
  }
  const Value* calls = json::member(m, "tool_calls");
  if (calls == nullptr || calls->IsNull()) {
    return std::nullopt;
  }
  if (!calls->IsArray()) {
    return openai::invalidValue("messages", "tool_calls must be an array");
  }
  for (const Value& call : calls->GetArray()) {
    ToolCallParts parts;
    if (auto e = readToolCall(call, wire, parts)) {
      return e;
    }
    writers.tool_call(parts);
  }
  return std::nullopt;
}

/// The output limit of turnsToSend.
Result<std::int64_t> outputLimit(const openai::ChatRequest& request,
                                 const config::Provider& provider, std::string_view wire) {
  const std::int64_t limit = config::outputTokenLimit(
      request.max_completion_tokens, provider.max_output_tokens, provider.default_max_tokens);
  if (limit == 0) {
    return openai::invalidValue("max_tokens", std::string(wire) +
                                                  " generates at least 1 token: max_tokens and "
                                                  "max_completion_tokens must be at least 1 for "
                                                  "this model");
  }
  return limit;
}

}  // namespace

Result<ImageSource> imageSource(const Value& part) {
  constexpr std::string_view kDataPrefix = "data:";
  constexpr std::string_view kBase64Marker = ";base64,";
  const Value* image = json::member(part, "image_url");
  const Value* url = image != nullptr && image->IsObject() ? json::member(*image, "url") : image;
  if (url == nullptr || !url->IsString()) {
    return openai::invalidValue("messages", "an image_url part needs image_url.url, a string");
  }
  ImageSource source;
  source.url = json::view(*url);
  if (!source.url.starts_with(kDataPrefix)) {
    return source;
  }
  const std::size_t marker = source.url.find(kBase64Marker);
  if (marker == std::string_view::npos || marker == kDataPrefix.size()) {
    return openai::invalidValue("messages",
                                "an image data: URL must be base64 (data:<media type>;base64,…)");
  }
  source.inline_data = true;
  source.media_type = source.url.substr(kDataPrefix.size(), marker - kDataPrefix.size());
  source.base64 = source.url.substr(marker + kBase64Marker.size());
  return source;
}

Result<Turns> turnsToSend(const openai::ChatRequest& request, const config::Provider& provider,
                          std::string_view wire) {
  const auto max_tokens = outputLimit(request, provider, wire);
  if (!max_tokens) {
    return max_tokens.error();
  }
  const Value* messages = json::member(request.body, "messages");
  if (messages == nullptr || !messages->IsArray()) {
    return openai::invalidValue("messages", "messages must be an array");
  }
  return Turns{*max_tokens, messages};
}

std::optional<Error> forEachPart(
    const Value* content, std::string_view wire, bool images,
    const std::function<std::optional<Error>(const ContentPart&)>& each) {
  if (content == nullptr || content->IsNull()) {
    return std::nullopt;
  }
  if (content->IsString()) {
    return each(ContentPart{content, nullptr});
  }
  if (!content->IsArray()) {
    return openai::invalidValue("messages",
                                "a message's content must be a string or an array of parts");
  }
  for (const Value& part : content->GetArray()) {
    const Value* type = json::member(part, "type");
    const std::string_view kind = isString(type) ? json::view(*type) : std::string_view();
    const Value* text = kind == "text" || kind == "refusal" ? json::member(part, kind) : nullptr;
    if (!isString(text) && !(images && kind == "image_url")) {
      return openai::invalidValue("messages", std::string(wire) + " accepts text" +
                                                  std::string(images ? " and image_url" : "") +
                                                  " content parts only here");
    }
    if (auto e = each(ContentPart{isString(text) ? text : nullptr, &part})) {
      return e;
    }
  }
  return std::nullopt;
}

bool yieldsBlocks(const Value& message) {
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

std::optional<Error> writeTurns(json::Writer& w, const Value& messages, std::string_view wire,
                                const TurnWriters& writers) {
  std::string_view open;  // The open turn's role, or empty.
  w.key("messages");
  w.startArray();
  for (const Value& m : messages.GetArray()) {
    const Value* r = json::member(m, "role");
    const std::string_view role = isString(r) ? json::view(*r) : std::string_view();
    if (role == "system" || role == "developer") {
      writers.system(m);
      continue;
    }
    if (role != "user" && role != "tool" && role != "assistant") {
      return openai::invalidValue(
          "messages",
          std::string(wire) + " does not accept messages of role '" + std::string(role) + "'");
    }
    if (role != "tool" && !yieldsBlocks(m)) {
      continue;
    }
    const std::string_view turn = role == "assistant" ? "assistant" : "user";
    if (turn != open) {
      if (!open.empty()) {
        w.endArray();
        w.endObject();
      }
      w.startObject();
      w.field("role", turn);
      w.key("content");
      w.startArray();
      open = turn;
    }
    if (auto e = turnBlocks(m, role, wire, writers)) {
      return e;
    }
  }
  if (!open.empty()) {
    w.endArray();
    w.endObject();
  }
  w.endArray();
  return std::nullopt;
}

void ToolCallParts::writeInput(json::Writer& w) const {
  if (input.IsObject()) {
    w.value(input);
    return;
  }
  w.startObject();
  w.endObject();
}

std::optional<Error> readToolCall(const Value& call, std::string_view wire, ToolCallParts& out) {
  const Value* fn = json::member(call, "function");
  out.id = json::member(call, "id");
  out.name = fn != nullptr ? json::member(*fn, "name") : nullptr;
  const Value* args = fn != nullptr ? json::member(*fn, "arguments") : nullptr;
  if (!isString(out.id) || !isString(out.name)) {
    return openai::invalidValue("messages", "a tool call needs an id and a function name");
  }
  const std::string text = isString(args) ? std::string(json::view(*args)) : std::string();
  out.input.SetNull();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return std::nullopt;  // Blank: no arguments.
  }
  if (json::parse(out.input, text) || !out.input.IsObject()) {
    return openai::invalidValue("messages",
                                "the arguments of tool call '" + std::string(json::view(*out.id)) +
                                    "' must be a JSON object to be sent to " + std::string(wire));
  }
  return std::nullopt;
}

}  // namespace tollgate::providers
