#include "providers/anthropic/anthropic.hpp"

#include <rapidjson/document.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "providers/wire.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

/// A block's `input` as the arguments text of a tool call.
std::string inputText(const Value& block) {
  const Value* input = json::member(block, "input");
  return input != nullptr && input->IsObject() ? json::serialize(*input) : std::string("{}");
}

}  // namespace

std::string_view finishReason(std::string_view stop_reason, bool json) {
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") {
    return "length";
  }
  if (stop_reason == "tool_use") {
    return json ? "stop" : "tool_calls";
  }
  if (stop_reason == "refusal") {
    return "content_filter";
  }
  return "stop";  // end_turn, stop_sequence, pause_turn, and any later addition.
}

Result<openai::Completion> parseMessage(std::string& body, KeepRaw keep, bool json,
                                        std::int64_t created) {
  openai::Completion c;
  rapidjson::Document doc;
  if (auto e = parseAnswer(body, doc, keep.response, c)) {
    return std::move(*e);
  }
  if (const Value* err = json::member(doc, "error"); err != nullptr && err->IsObject()) {
    return errorOfType(502, json::stringMember(*err, "type").value_or(""),
                       json::stringMember(*err, "message").value_or(""));
  }
  const Value* content = json::member(doc, "content");
  if (content == nullptr || !content->IsArray()) {
    return malformedAnswer("a message without a content array");
  }
  c.id = std::string(json::stringMember(doc, "id").value_or(""));
  c.upstream_model = text::utf8Prefix(json::stringMember(doc, "model").value_or(""),
                                      openai::kMaxUpstreamModelBytes);
  c.created = created;
  openai::Choice choice;
  std::string text;
  std::string reasoning;
  bool has_text = false;
  bool has_reasoning = false;
  for (const Value& block : content->GetArray()) {
    const std::string_view type = json::stringMember(block, "type").value_or("");
    if (type == "thinking") {
      // Its signature stays behind, as redacted_thinking blocks do: neither is text.
      reasoning.append(json::stringMember(block, "thinking").value_or(""));
      has_reasoning = true;
    } else if (type == "text") {
      text.append(json::stringMember(block, "text").value_or(""));
      has_text = true;
    } else if (type == "tool_use" && json) {
      text.append(inputText(block));
      has_text = true;
    } else if (type == "tool_use") {
      choice.tool_calls.push_back(openai::ToolCall{
          std::string(json::stringMember(block, "id").value_or("")),
          std::string(json::stringMember(block, "name").value_or("")), inputText(block)});
    }
    // redacted_thinking and server tool blocks have no place in our message.
  }
  if (has_reasoning) {
    choice.reasoning_content = std::move(reasoning);
  }
  if (has_text || choice.tool_calls.empty()) {
    choice.content = std::move(text);
  }
  choice.finish_reason = finishReason(json::stringMember(doc, "stop_reason").value_or(""), json);
  c.choices.push_back(std::move(choice));
  if (const Value* u = json::member(doc, "usage"); u != nullptr && u->IsObject()) {
    // Counts that are not counts leave the usage missing: the charge is estimated, and flagged.
    UsageReport report;
    report.read(*u);
    c.usage = report.counts();
    if (keep.usage) {
      c.raw_usage_json = json::serialize(*u);
    }
  }
  return c;
}

Error errorOfType(int status, std::string_view type, std::string_view message) {
  const std::string detail(message);
  if (type == "overloaded_error" || (type.empty() && status == 529)) {
    return Error{ErrorKind::UpstreamUnavailable,
                 detail.empty() ? "the upstream provider is overloaded" : detail, ""};
  }
  if (type == "rate_limit_error") {
    return errorForStatus(429, detail);
  }
  if (type == "authentication_error" || type == "permission_error") {
    // Never relayed: the text may quote the credentials.
    return errorForStatus(type == "permission_error" ? 403 : 401, "");
  }
  if (type == "invalid_request_error" || type == "not_found_error" || type == "request_too_large") {
    return Error{ErrorKind::UpstreamInvalidRequest, detail, ""};
  }
  if (type == "timeout_error") {
    return Error{ErrorKind::UpstreamTimeout, detail, ""};
  }
  if (type == "api_error" || type == "billing_error") {
    // billing_error (402) is the operator's account, not the client's request: another
    // provider may still answer.
    return Error{ErrorKind::UpstreamError, detail, ""};
  }
  return errorForStatus(status, detail);
}

Error translateError(int status, const std::string& body) {
  rapidjson::Document doc;
  if (!json::parse(doc, body)) {
    if (const Value* err = json::member(doc, "error"); err != nullptr && err->IsObject()) {
      return errorOfType(status, json::stringMember(*err, "type").value_or(""),
                         json::stringMember(*err, "message").value_or(""));
    }
  }
  return errorOfType(status, "", upstreamMessage(body));
}

namespace {

class AnthropicExchange final : public TranslatedExchange {
 public:
  AnthropicExchange(const openai::ChatRequest& request, const config::Provider& provider,
                    const openai::ResponseMeta& meta)
      : TranslatedExchange(provider, meta, request.stream, buildMessagesBody(request, provider)),
        json_(wantsJson(request)),
        decoder_(meta, json_, created_) {}

  Result<UpstreamRequest> request() override {
    auto r = requestWith(messagesPath(provider_));
    if (r && !provider_.api_key.empty()) {
      r->headers.emplace_back("x-api-key", provider_.api_key);
    }
    if (r && !provider_.api_version.empty()) {
      r->headers.emplace_back("anthropic-version", provider_.api_version);
    }
    return r;
  }

  Result<std::string> completion(std::string& body) override {
    return encode(parseMessage(body, keep(), json_, created_));
  }

  Result<bool> event(std::string_view name, std::string& data, std::string& out) override {
    return decoder_.event(name, data, out, usage_);
  }

  std::optional<openai::Usage> interimUsage() const override { return decoder_.reportedUsage(); }

  std::string_view responseModel() const override { return answerModel(decoder_.model()); }

  Error error(int status, const std::string& body) override { return translateError(status, body); }

 private:
  bool json_;
  StreamDecoder decoder_;
};

class AnthropicAdapter final : public Adapter {
 public:
  std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                 const config::Provider& provider,
                                 const openai::ResponseMeta& meta) const override {
    return std::make_unique<AnthropicExchange>(request, provider, meta);
  }
};

}  // namespace

const Adapter& anthropicAdapter() {
  static const AnthropicAdapter adapter;
  return adapter;
}

}  // namespace tollgate::providers::anthropic
