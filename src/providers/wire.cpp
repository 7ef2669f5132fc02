#include "providers/wire.hpp"

#include <algorithm>
#include <chrono>

#include "core/json.hpp"

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
