#include "providers/wire.hpp"

#include <algorithm>
#include <chrono>

#include "core/json.hpp"
#include "openai/fields.hpp"

namespace tollgate::providers {

Error malformedAnswer(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

std::int64_t unixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

PooledEvent::PooledEvent(std::string& data)
    : allocator_(pool_.data(), pool_.size()), doc_(&allocator_) {
  object_ = !json::parseInPlace(doc_, data) && doc_.IsObject();
}

bool hasContent(const rapidjson::Value& message) {
  const rapidjson::Value* calls = json::member(message, "tool_calls");
  if (calls != nullptr && calls->IsArray() && !calls->Empty()) {
    return true;
  }
  const rapidjson::Value* content = json::member(message, "content");
  if (content == nullptr || content->IsNull()) {
    return false;
  }
  if (content->IsString()) {
    return content->GetStringLength() > 0;
  }
  if (!content->IsArray()) {
    return true;
  }
  return std::any_of(content->Begin(), content->End(), [](const rapidjson::Value& part) {
    const rapidjson::Value* text = json::member(part, "text");
    return text == nullptr || !text->IsString() || text->GetStringLength() > 0;
  });
}

std::optional<Error> parseAnswer(std::string& body, rapidjson::Document& doc, bool keep_response,
                                 openai::Completion& c) {
  if (keep_response) {
    c.raw_response_json = body;  // Before the in-place parse rewrites it.
  }
  if (json::parseInPlace(doc, body) || !doc.IsObject()) {
    return malformedAnswer("a body that is not a JSON object");
  }
  return std::nullopt;
}

Result<std::vector<ClientToolCall>> clientToolCalls(const rapidjson::Value& calls,
                                                    std::string_view model) {
  if (!calls.IsArray()) {
    return openai::invalidValue("messages", "tool_calls must be an array");
  }
  std::vector<ClientToolCall> out;
  for (const rapidjson::Value& call : calls.GetArray()) {
    const rapidjson::Value* fn = json::member(call, "function");
    const auto id = json::stringMember(call, "id");
    const auto name = fn != nullptr ? json::stringMember(*fn, "name") : std::nullopt;
    if (!id || !name) {
      return openai::invalidValue("messages", "a tool call needs an id and a function name");
    }
    ClientToolCall c{*id, *name, {}};
    if (!argumentsObject(json::stringMember(*fn, "arguments").value_or(""), c.arguments)) {
      return openai::invalidValue("messages", "the arguments of tool call '" + std::string(*id) +
                                                  "' must be a JSON object to be sent to " +
                                                  std::string(model));
    }
    out.push_back(std::move(c));
  }
  return out;
}

Result<std::int64_t> positiveOutputLimit(const openai::ChatRequest& request,
                                         const config::Provider& config,
                                         std::string_view provider) {
  const std::int64_t limit = config::outputTokenLimit(
      request.max_completion_tokens, config.max_output_tokens, config.default_max_tokens);
  if (limit == 0) {
    return openai::invalidValue("max_tokens",
                                std::string(provider) +
                                    " generates at least 1 token: max_tokens and "
                                    "max_completion_tokens must be at least 1 for this model");
  }
  return limit;
}

bool argumentsObject(std::string_view text, rapidjson::Document& into) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    into.SetObject();
    return true;
  }
  return !json::parse(into, std::string(text)) && into.IsObject();
}

TranslatedExchange::TranslatedExchange(const config::Provider& provider,
                                       const openai::ResponseMeta& meta, bool stream,
                                       Result<std::string> body)
    : provider_(provider),
      meta_(meta),
      stream_(stream),
      created_(unixSeconds()),
      body_(std::move(body)) {}

Result<UpstreamRequest> TranslatedExchange::requestWith(std::string path) {
  if (!body_) {
    return body_.error();  // Nothing is sent.
  }
  UpstreamRequest r;
  r.path = std::move(path);
  r.body = std::move(body_).value();
  r.headers.emplace_back("Accept", stream_ ? "text/event-stream" : "application/json");
  return r;
}

Result<std::string> TranslatedExchange::encode(Result<openai::Completion> c) {
  if (!c) {
    return std::move(c).error();
  }
  usage_ = c->usage;
  model_ = std::move(c->upstream_model);
  return openai::encodeCompletion(*c, meta_);
}

}  // namespace tollgate::providers
