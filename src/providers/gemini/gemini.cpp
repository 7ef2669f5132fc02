#include "providers/gemini/gemini.hpp"

#include <rapidjson/document.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "providers/wire.hpp"

namespace tollgate::providers::gemini {
using rapidjson::Value;

std::string_view finishReason(std::string_view reason, bool tool_calls) {
  if (tool_calls) {
    return "tool_calls";
  }
  if (reason == "MAX_TOKENS") {
    return "length";
  }
  if (reason == "SAFETY" || reason == "RECITATION" || reason == "BLOCKLIST" ||
      reason == "PROHIBITED_CONTENT" || reason == "SPII" || reason == "IMAGE_SAFETY") {
    return "content_filter";
  }
  return "stop";  // STOP, FINISH_REASON_UNSPECIFIED, OTHER, MALFORMED_FUNCTION_CALL, later ones.
}

Result<Parts> readParts(const Value& candidate, int& calls) {
  Parts out;
  if (!candidate.IsObject()) {
    return malformedAnswer("a candidate that is not an object");
  }
  const Value* content = json::member(candidate, "content");
  if (content == nullptr || content->IsNull()) {
    return out;  // A candidate stopped by a filter may have no content.
  }
  const Value* parts = content->IsObject() ? json::member(*content, "parts") : nullptr;
  if (parts == nullptr || parts->IsNull()) {
    return out;
  }
  if (!parts->IsArray()) {
    return malformedAnswer("a candidate whose parts are not an array");
  }
  for (const Value& part : parts->GetArray()) {
    if (!part.IsObject()) {
      return malformedAnswer("a part that is not an object");
    }
    const Value* thought = json::member(part, "thought");
    const bool thinking = thought != nullptr && thought->IsBool() && thought->GetBool();
    if (const auto text = json::stringMember(part, "text")) {
      std::optional<std::string>& into = thinking ? out.reasoning : out.text;
      into = into.value_or("") + std::string(*text);
    } else if (const Value* call = json::member(part, "functionCall"); call != nullptr) {
      const auto name = call->IsObject() ? json::stringMember(*call, "name") : std::nullopt;
      if (!name) {
        return malformedAnswer("a functionCall without a name");
      }
      const Value* args = json::member(*call, "args");
      // A thinking model's call carries a signature it must get back with the call on the next
      // turn: it travels in the id, which clients return as they got it.
      std::string id = "call_" + std::to_string(calls++);
      if (const auto signature = json::stringMember(part, "thoughtSignature")) {
        id.append(kSignatureMark).append(*signature);
      }
      out.calls.push_back(openai::ToolCall{
          std::move(id), std::string(*name),
          args != nullptr && args->IsObject() ? json::serialize(*args) : std::string("{}")});
    }
    // Text parts' signatures, executableCode, inlineData answers and the like are not in our
    // message.
  }
  return out;
}

namespace {

/// The blocked prompt's error, when `doc` says the prompt was blocked and has no candidates.
std::optional<Error> blockedPrompt(const Value& doc) {
  const Value* candidates = json::member(doc, "candidates");
  if (candidates != nullptr && candidates->IsArray() && !candidates->Empty()) {
    return std::nullopt;
  }
  const Value* feedback = json::member(doc, "promptFeedback");
  const auto reason = feedback != nullptr && feedback->IsObject()
                          ? json::stringMember(*feedback, "blockReason")
                          : std::nullopt;
  if (!reason) {
    return std::nullopt;
  }
  return Error{ErrorKind::UpstreamInvalidRequest,
               "the upstream provider blocked the prompt (" + text::printable(*reason, 64) + ")",
               ""};
}

}  // namespace

Result<openai::Completion> parseResponse(std::string& body, KeepRaw keep, std::int64_t created) {
  openai::Completion c;
  rapidjson::Document doc;
  if (auto e = parseAnswer(body, keep.response, doc, c)) {
    return std::move(*e);
  }
  if (const Value* err = json::member(doc, "error"); err != nullptr && err->IsObject()) {
    return errorOfStatus(502, json::stringMember(*err, "status").value_or(""),
                         json::stringMember(*err, "message").value_or(""));
  }
  if (auto blocked = blockedPrompt(doc)) {
    return std::move(*blocked);
  }
  const Value* candidates = json::member(doc, "candidates");
  if (candidates == nullptr || !candidates->IsArray() || candidates->Empty()) {
    return malformedAnswer("an answer without candidates");
  }
  const Value& candidate = (*candidates)[0];
  int calls = 0;
  auto parts = readParts(candidate, calls);
  if (!parts) {
    return std::move(parts).error();
  }
  c.id = "chatcmpl-" + std::string(json::stringMember(doc, "responseId").value_or(""));
  c.upstream_model = text::utf8Prefix(json::stringMember(doc, "modelVersion").value_or(""),
                                      openai::kMaxUpstreamModelBytes);
  c.created = created;
  openai::Choice choice;
  choice.reasoning_content = std::move(parts->reasoning);
  choice.tool_calls = std::move(parts->calls);
  if (parts->text || choice.tool_calls.empty()) {
    choice.content = parts->text.value_or("");
  }
  choice.finish_reason = finishReason(json::stringMember(candidate, "finishReason").value_or(""),
                                      !choice.tool_calls.empty());
  c.choices.push_back(std::move(choice));
  if (const Value* u = json::member(doc, "usageMetadata"); u != nullptr && u->IsObject()) {
    // Counts that are not counts leave the usage missing: the charge is estimated, and flagged.
    c.usage = readUsage(*u);
    if (keep.usage) {
      c.raw_usage_json = json::serialize(*u);
    }
  }
  return c;
}

Error errorOfStatus(int status, std::string_view code, std::string_view message) {
  const std::string detail(message);
  if (code == "INVALID_ARGUMENT" || code == "FAILED_PRECONDITION" || code == "NOT_FOUND" ||
      code == "OUT_OF_RANGE") {
    return Error{ErrorKind::UpstreamInvalidRequest,
                 detail.empty() ? "the upstream provider refused the request" : detail, ""};
  }
  if (code == "UNAUTHENTICATED" || code == "PERMISSION_DENIED") {
    // Never relayed: the text may quote the credentials.
    return errorForStatus(code == "PERMISSION_DENIED" ? 403 : 401, "");
  }
  if (code == "RESOURCE_EXHAUSTED") {
    return errorForStatus(429, detail);
  }
  if (code == "UNAVAILABLE" || (code.empty() && status == 503)) {
    return Error{ErrorKind::UpstreamUnavailable,
                 detail.empty() ? "the upstream provider is unavailable" : detail, ""};
  }
  if (code == "DEADLINE_EXCEEDED" || (code.empty() && status == 504)) {
    return Error{ErrorKind::UpstreamTimeout,
                 detail.empty() ? "the upstream provider timed out" : detail, ""};
  }
  if (!code.empty()) {
    return Error{ErrorKind::UpstreamError, detail.empty() ? std::string(code) : detail, ""};
  }
  return errorForStatus(status, detail);
}

Error translateError(int status, const std::string& body) {
  rapidjson::Document doc;
  if (!json::parse(doc, body)) {
    // Gemini's body is an object, or (from some front ends) an array holding one.
    const Value* root = &doc;
    if (doc.IsArray() && doc.Size() == 1) {
      root = &doc[0];
    }
    if (const Value* err = json::member(*root, "error"); err != nullptr && err->IsObject()) {
      return errorOfStatus(status, json::stringMember(*err, "status").value_or(""),
                           json::stringMember(*err, "message").value_or(""));
    }
  }
  return errorOfStatus(status, "", upstreamMessage(body));
}

void withKey(UpstreamRequest& r, const config::Provider& provider) {
  if (!provider.api_key.empty()) {
    r.headers.emplace_back("x-goog-api-key", provider.api_key);  // Never a ?key= parameter.
  }
}

namespace {

class GeminiExchange final : public TranslatedExchange {
 public:
  GeminiExchange(const openai::ChatRequest& request, const config::Provider& provider,
                 const openai::ResponseMeta& meta)
      : TranslatedExchange(provider, meta, request.stream, buildGenerateBody(request, provider)),
        decoder_(meta, created_) {}

  Result<UpstreamRequest> request() override {
    auto r = requestWith(
        modelPath(provider_, stream_ ? "streamGenerateContent?alt=sse" : "generateContent"));
    if (r) {
      withKey(*r, provider_);
    }
    return r;
  }

  Result<std::string> completion(std::string& body) override {
    return encode(parseResponse(body, keep(), created_));
  }

  Result<bool> event(std::string_view, std::string& data, std::string& out) override {
    return decoder_.event(data, out);
  }

  Result<bool> streamEnded(std::string& out) override { return decoder_.finish(out, usage_); }

  std::optional<openai::Usage> interimUsage() const override { return decoder_.reportedUsage(); }

  std::string_view responseModel() const override { return answerModel(decoder_.model()); }

  Error error(int status, const std::string& body) override { return translateError(status, body); }

 private:
  StreamDecoder decoder_;
};

class GeminiAdapter final : public Adapter {
 public:
  std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                 const config::Provider& provider,
                                 const openai::ResponseMeta& meta) const override {
    return std::make_unique<GeminiExchange>(request, provider, meta);
  }
  std::unique_ptr<Exchange> embed(const openai::EmbeddingRequest& request,
                                  const config::Provider& provider) const override {
    return embedding(request, provider);
  }
};

}  // namespace

const Adapter& geminiAdapter() {
  static const GeminiAdapter adapter;
  return adapter;
}

}  // namespace tollgate::providers::gemini
