#include "providers/wire.hpp"

#include <algorithm>
#include <chrono>

#include "core/json.hpp"
#include "openai/fields.hpp"

namespace tollgate::providers {

PooledEvent::PooledEvent(std::string& data)
    : allocator_(pool_.data(), pool_.size()), doc_(&allocator_) {
  object_ = !json::parseInPlace(doc_, data) && doc_.IsObject();
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
