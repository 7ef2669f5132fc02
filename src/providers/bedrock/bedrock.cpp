#include "providers/bedrock/bedrock.hpp"

#include <rapidjson/document.h>

#include <chrono>
#include <limits>
#include <memory>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "providers/answer_parts.hpp"
#include "providers/bedrock/credentials.hpp"
#include "providers/bedrock/sigv4.hpp"

namespace tollgate::providers::bedrock {
namespace {

using rapidjson::Value;

constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();
constexpr std::string_view kService = "bedrock";

/// The lower-cased first letter of `type` and the rest, so that a response's
/// "ThrottlingException" and a stream's "throttlingException" compare alike; any "#" prefix
/// (a namespace, as some AWS errors write their __type) is dropped.
std::string normalizedType(std::string_view type) {
  if (const auto hash = type.rfind('#'); hash != std::string_view::npos) {
    type = type.substr(hash + 1);
  }
  if (const auto colon = type.find(':'); colon != std::string_view::npos) {
    type = type.substr(0, colon);
  }
  std::string out(type);
  if (!out.empty() && out[0] >= 'A' && out[0] <= 'Z') {
    out[0] = static_cast<char>(out[0] - 'A' + 'a');
  }
  return out;
}

}  // namespace

std::string_view finishReason(std::string_view stop_reason) {
  if (stop_reason == "max_tokens" || stop_reason == "model_context_window_exceeded") {
    return "length";
  }
  if (stop_reason == "tool_use") {
    return "tool_calls";
  }
  if (stop_reason == "guardrail_intervened" || stop_reason == "content_filtered") {
    return "content_filter";
  }
  return "stop";  // end_turn, stop_sequence, and any later addition.
}

std::optional<usage::Counts> readUsage(const Value& u) {
  if (!u.IsObject()) {
    return std::nullopt;
  }
  const auto input = json::countMember(u, "inputTokens");
  const auto output = json::countMember(u, "outputTokens");
  std::int64_t reads = 0;
  std::int64_t writes = 0;
  for (auto [name, into] :
       {std::pair{"cacheReadInputTokens", &reads}, std::pair{"cacheWriteInputTokens", &writes}}) {
    const Value* v = json::member(u, name);
    if (v == nullptr || v->IsNull()) {
      continue;
    }
    const auto n = json::countMember(u, name);
    if (!n) {
      return std::nullopt;  // Not a count: which is true is not known.
    }
    *into = *n;
  }
  if (!input || !output) {
    return std::nullopt;
  }
  usage::Counts c;
  c.cached_tokens = reads;
  c.cache_write_tokens = std::min(writes, kMaxCount - reads);
  if (__builtin_add_overflow(*input, c.cached_tokens + c.cache_write_tokens, &c.prompt_tokens)) {
    c.prompt_tokens = kMaxCount;
  }
  c.completion_tokens = *output;
  c.prompt_details = true;
  return c;
}

Result<openai::Completion> parseConverse(std::string& body, KeepRaw keep, std::string id,
                                         std::int64_t created) {
  openai::Completion c;
  rapidjson::Document doc;
  if (auto e = parseAnswer(body, keep.response, doc, c)) {
    return std::move(*e);
  }
  const Value* output = json::member(doc, "output");
  const Value* message = output != nullptr ? json::member(*output, "message") : nullptr;
  const Value* content = message != nullptr ? json::member(*message, "content") : nullptr;
  if (content == nullptr || !content->IsArray()) {
    return malformedAnswer("an answer without output.message.content, an array");
  }
  c.id = std::move(id);
  c.created = created;
  MessageParts parts;
  for (const Value& block : content->GetArray()) {
    if (!block.IsObject()) {
      return malformedAnswer("a content block that is not an object");
    }
    const Value* use = json::member(block, "toolUse");
    const Value* thought = json::member(block, "reasoningContent");
    const Value* said = thought != nullptr ? json::member(*thought, "reasoningText") : nullptr;
    if (const auto t = json::stringMember(block, "text")) {
      parts.text(*t);
    } else if (use != nullptr && use->IsObject()) {
      parts.toolCall(json::stringMember(*use, "toolUseId").value_or(""),
                     json::stringMember(*use, "name").value_or(""), inputText(*use));
    } else if (use != nullptr) {
      return malformedAnswer("a toolUse block that is not an object");
    } else if (said != nullptr && said->IsObject()) {
      // Its signature, and redactedContent, stay behind: neither is text.
      parts.reasoning(json::stringMember(*said, "text").value_or(""));
    }
  }
  c.choices.push_back(
      std::move(parts).take(finishReason(json::stringMember(doc, "stopReason").value_or(""))));
  if (const Value* u = json::member(doc, "usage"); u != nullptr && u->IsObject()) {
    c.usage = readUsage(*u);  // Counts that are not counts leave it missing: estimated.
    if (keep.usage) {
      c.raw_usage_json = json::serialize(*u);
    }
  }
  return c;
}

Error errorOfType(int status, std::string_view type, std::string_view message) {
  const std::string t = normalizedType(type);
  const std::string detail(message);
  if (t == "throttlingException" || t == "serviceQuotaExceededException" ||
      (t.empty() && status == 429)) {
    return errorForStatus(429, detail);
  }
  if (t == "accessDeniedException" || t == "unrecognizedClientException" ||
      t == "expiredTokenException" || t == "expiredToken" || t == "invalidSignatureException" ||
      t == "incompleteSignature" || t == "missingAuthenticationTokenException") {
    return errorForStatus(403, "");  // Never relayed: the text may quote the credentials.
  }
  if (t == "validationException" || t == "resourceNotFoundException") {
    return Error{ErrorKind::UpstreamInvalidRequest, detail, ""};
  }
  if (t == "modelTimeoutException" || (t.empty() && status == 408)) {
    return Error{ErrorKind::UpstreamTimeout,
                 detail.empty() ? "the upstream model timed out" : detail, ""};
  }
  if (t == "serviceUnavailableException" || t == "modelNotReadyException" ||
      (t.empty() && status == 503)) {
    return Error{ErrorKind::UpstreamUnavailable,
                 detail.empty() ? "the upstream provider is unavailable" : detail, ""};
  }
  if (t == "internalServerException" || t == "modelStreamErrorException" ||
      t == "modelErrorException" || (t.empty() && status == 424)) {
    return Error{ErrorKind::UpstreamError,
                 detail.empty() ? "the upstream model failed: " + t : detail, ""};
  }
  return errorForStatus(status, detail);
}

Error translateError(int status, const std::string& body) {
  rapidjson::Document doc;
  if (!json::parse(doc, body) && doc.IsObject()) {
    std::string_view type = json::stringMember(doc, "__type").value_or("");
    const auto message = json::stringMember(doc, "message")
                             .value_or(json::stringMember(doc, "Message").value_or(""));
    if (type.empty() && status == 403) {
      type = "accessDeniedException";
    }
    return errorOfType(status, type, message);
  }
  return errorOfType(status, "", upstreamMessage(body));
}

namespace {

/// Signs one attempt with SigV4 as the transport sends it, keeping what the redactor must hide.
class SigV4Signer final : public Signer {
 public:
  SigV4Signer(const config::Provider& provider, std::vector<std::string>& secrets)
      : provider_(provider), secrets_(secrets) {}

  Status sign(UpstreamRequest& r, std::string_view host,
              std::chrono::system_clock::time_point time) override {
    auto keys = currentKeys(provider_.aws);
    if (!keys) {
      return std::move(keys).error();
    }
    secrets_.push_back(keys->secret_access_key);
    if (!keys->session_token.empty()) {
      secrets_.push_back(keys->session_token);
    }
    const std::string date = sigv4::amzDate(time);
    const std::string payload = sigv4::sha256Hex(r.body);
    sigv4::Request req;
    req.method = r.method;
    const std::string path = r.path.substr(0, r.path.find('?'));
    const std::string uri = sigv4::canonicalUri(path);
    req.canonical_uri = uri;
    req.canonical_query = "";
    req.headers = {
        {"host", std::string(host)}, {"x-amz-content-sha256", payload}, {"x-amz-date", date}};
    if (!keys->session_token.empty()) {
      req.headers.emplace_back("x-amz-security-token", keys->session_token);
    }
    req.payload_hash = payload;
    const sigv4::Scope scope{date, provider_.region, kService};
    const std::string sig = sigv4::signature(
        keys->secret_access_key, scope, sigv4::stringToSign(scope, sigv4::canonicalRequest(req)));
    secrets_.push_back(sig);
    r.headers.emplace_back("X-Amz-Date", date);
    r.headers.emplace_back("X-Amz-Content-Sha256", payload);
    if (!keys->session_token.empty()) {
      r.headers.emplace_back("X-Amz-Security-Token", keys->session_token);
    }
    r.headers.emplace_back("Authorization", sigv4::authorization(keys->access_key_id, scope,
                                                                 sigv4::signedHeaders(req), sig));
    return Ok{};
  }

 private:
  const config::Provider& provider_;
  std::vector<std::string>& secrets_;
};

class BedrockExchange final : public Exchange {
 public:
  BedrockExchange(const openai::ChatRequest& request, const config::Provider& provider,
                  const openai::ResponseMeta& meta)
      : provider_(provider),
        meta_(meta),
        stream_(request.stream),
        created_(unixSeconds()),
        id_("chatcmpl-" + ids::uuidV7()),
        body_(buildConverseBody(request, provider)),
        signer_(provider, secrets_),
        decoder_(meta, id_, created_) {}

  Result<UpstreamRequest> request() override {
    if (!body_) {
      return body_.error();  // Nothing is sent.
    }
    UpstreamRequest r;
    r.path = conversePath(provider_, stream_);
    r.body = std::move(body_).value();
    r.headers.emplace_back("Accept",
                           stream_ ? "application/vnd.amazon.eventstream" : "application/json");
    if (!provider_.api_key.empty()) {
      r.headers.emplace_back("Authorization", "Bearer " + provider_.api_key);
    } else {
      r.signer = &signer_;
    }
    return r;
  }

  Result<std::string> completion(std::string& body) override {
    const KeepRaw keep{meta_.include_raw_usage, meta_.include_raw_response};
    auto answer = parseConverse(body, keep, id_, created_);
    usage_ = answer ? answer->usage : std::nullopt;
    return answer ? Result<std::string>(openai::encodeCompletion(*answer, meta_))
                  : Result<std::string>(std::move(answer).error());
  }

  Result<bool> event(std::string_view name, std::string& data, std::string& out) override {
    return decoder_.event(name, data, out, usage_);
  }

  Result<bool> streamEnded(std::string& /*out*/) override {
    // Cut after messageStop: the answer is whole, only its usage is missing (estimated).
    return decoder_.stopped();
  }

  StreamFraming framing() const override { return StreamFraming::AwsEventStream; }

  std::vector<std::string> sentSecrets() const override { return secrets_; }

  Error error(int status, const std::string& body) override { return translateError(status, body); }

 private:
  const config::Provider& provider_;
  const openai::ResponseMeta& meta_;
  bool stream_;
  std::int64_t created_;
  std::string id_;
  Result<std::string> body_;
  std::vector<std::string> secrets_;
  SigV4Signer signer_;
  StreamDecoder decoder_;
};

}  // namespace

const Adapter& bedrockAdapter() {
  static const ChatAdapter<BedrockExchange> adapter;
  return adapter;
}

}  // namespace tollgate::providers::bedrock
