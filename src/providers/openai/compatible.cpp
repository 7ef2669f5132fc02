#include "providers/openai/compatible.hpp"

#include <rapidjson/document.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/sse.hpp"
#include "providers/openai/completion.hpp"
#include "providers/openai/endpoints.hpp"
#include "providers/openai/stream.hpp"

namespace tollgate::providers {
namespace {

using rapidjson::Value;

Error badUpstream(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

std::optional<std::string> optionalString(const Value& object, std::string_view name) {
  const auto s = json::stringMember(object, name);
  return s ? std::optional<std::string>(*s) : std::nullopt;
}

std::string rawJson(const Value* v) {
  return v == nullptr || v->IsNull() ? std::string() : json::serialize(*v);
}

std::optional<openai::Usage> parseUsage(const Value& root) {
  const Value* u = json::member(root, "usage");
  if (u == nullptr || !u->IsObject()) {
    return std::nullopt;
  }
  // Both counts, or none to trust: the charge is then estimated (and flagged), never zero.
  const auto prompt = json::countMember(*u, "prompt_tokens");
  const auto completion = json::countMember(*u, "completion_tokens");
  if (!prompt || !completion) {
    return std::nullopt;
  }
  openai::Usage usage = usage::of(*prompt, *completion);
  // A detail that is there must be a count too; one left out (or null) is 0.
  const auto detail = [&](const char* object, const char* name, std::int64_t& into, bool& seen) {
    const Value* d = json::member(*u, object);
    if (d == nullptr || !d->IsObject()) {
      return true;
    }
    seen = true;
    const Value* n = json::member(*d, name);
    const auto count =
        n == nullptr || n->IsNull() ? std::optional<std::int64_t>(0) : json::countMember(*d, name);
    into = count.value_or(0);
    return count.has_value();
  };
  const bool counts =
      detail("prompt_tokens_details", "cached_tokens", usage.cached_tokens, usage.prompt_details) &&
      detail("prompt_tokens_details", "audio_tokens", usage.audio_prompt_tokens,
             usage.prompt_details) &&
      detail("completion_tokens_details", "reasoning_tokens", usage.reasoning_tokens,
             usage.completion_details) &&
      detail("completion_tokens_details", "audio_tokens", usage.audio_completion_tokens,
             usage.completion_details);
  return counts ? std::optional(usage) : std::nullopt;
}

void parseHead(const Value& root, std::string& id, std::int64_t& created,
               std::string& fingerprint) {
  id = std::string(json::stringMember(root, "id").value_or(""));
  created = json::intMember(root, "created").value_or(0);
  fingerprint = std::string(json::stringMember(root, "system_fingerprint").value_or(""));
}

Result<openai::ChoiceDelta> parseDelta(const Value& c, int position) {
  if (!c.IsObject()) {
    return badUpstream("a chunk choice that is not an object");
  }
  openai::ChoiceDelta choice;
  choice.index = static_cast<int>(json::intMember(c, "index").value_or(position));
  choice.finish_reason = optionalString(c, "finish_reason");
  choice.logprobs_json = rawJson(json::member(c, "logprobs"));
  const Value* delta = json::member(c, "delta");
  if (delta == nullptr || !delta->IsObject()) {
    return choice;
  }
  choice.role = optionalString(*delta, "role");
  choice.content = optionalString(*delta, "content");
  choice.refusal = optionalString(*delta, "refusal");
  const Value* calls = json::member(*delta, "tool_calls");
  if (calls != nullptr && calls->IsArray()) {
    int i = 0;
    for (const Value& t : calls->GetArray()) {
      openai::ToolCallDelta d;
      d.index = static_cast<int>(json::intMember(t, "index").value_or(i++));
      d.id = optionalString(t, "id");
      if (const Value* fn = json::member(t, "function"); fn != nullptr && fn->IsObject()) {
        d.name = optionalString(*fn, "name");
        d.arguments = optionalString(*fn, "arguments");
      }
      choice.tool_calls.push_back(std::move(d));
    }
  }
  return choice;
}

}  // namespace

std::string upstreamMessage(const std::string& body) {
  rapidjson::Document doc;
  if (!json::parse(doc, body)) {
    if (const Value* err = json::member(doc, "error")) {
      if (err->IsString()) {
        return std::string(json::view(*err));
      }
      if (auto m = json::stringMember(*err, "message")) {
        return std::string(*m);
      }
    }
    if (auto m = json::stringMember(doc, "message")) {
      return std::string(*m);
    }
  }
  // Not JSON (an HTML page, a proxy's text): a bounded, printable excerpt, never raw bytes.
  constexpr std::size_t kMaxEcho = 200;
  return text::printable(body, kMaxEcho);
}

std::string chatPath(const config::Provider& provider) {
  return provider.api_base.path + "/chat/completions";
}

std::string buildChatBody(const openai::ChatRequest& request, const config::Provider& provider) {
  constexpr std::size_t kAddedBytes = 256;  // The model, the output limit and stream_options.
  std::string body;
  body.reserve(request.sent.size() + kAddedBytes);
  body.append("{\"model\":");
  json::appendQuoted(provider.model, body);
  std::size_t i = 0;
  for (const auto& m : request.body.GetObject()) {
    const std::string_view name = json::view(m.name);
    if (!m.value.IsNull() && openai::isForwardedField(name)) {
      // An allowed name is one of ours, plain ASCII. The value is the client's own bytes when
      // kept, not written again.
      body.append(",\"").append(name).append("\":");
      if (const auto sent = openai::sentValue(request, i)) {
        body.append(*sent);
      } else {
        body.append(json::serialize(m.value));
      }
    }
    ++i;
  }
  // Always a limit, the one the hold covers: an upstream left without one may bill any length.
  body.append(",\"max_completion_tokens\":")
      .append(std::to_string(config::outputTokenLimit(
          request.max_completion_tokens, provider.max_output_tokens, provider.default_max_tokens)));
  if (request.stream) {
    // Usage is always asked for, so a streamed request can be billed; the relay drops the usage
    // chunk when the client did not ask for it.
    body.append(R"(,"stream_options":{"include_usage":true})");
  }
  body.push_back('}');
  return body;
}

Result<std::optional<openai::Chunk>> parseChunk(std::string& data, KeepRaw keep) {
  if (data == "[DONE]") {
    return std::optional<openai::Chunk>();
  }
  openai::Chunk c;
  if (keep.response) {
    c.raw_chunk_json = data;
  }
  rapidjson::Document doc;
  if (json::parseInPlace(doc, data) || !doc.IsObject()) {
    return badUpstream("a stream event that is not a JSON object");
  }
  if (json::member(doc, "error") != nullptr) {
    Error e = translateUpstreamError(502, json::serialize(doc));
    e.kind = ErrorKind::UpstreamError;
    return e;
  }
  parseHead(doc, c.id, c.created, c.system_fingerprint);
  if (const Value* choices = json::member(doc, "choices");
      choices != nullptr && choices->IsArray()) {
    int position = 0;
    for (const Value& ch : choices->GetArray()) {
      auto delta = parseDelta(ch, position++);
      if (!delta) {
        return std::move(delta).error();
      }
      c.choices.push_back(std::move(delta).value());
    }
  }
  c.usage = parseUsage(doc);
  if (keep.usage) {
    c.raw_usage_json = rawJson(json::member(doc, "usage"));
  }
  return std::optional<openai::Chunk>(std::move(c));
}

Error translateUpstreamError(int status, const std::string& body) {
  return errorForStatus(status, upstreamMessage(body));
}

Error errorForStatus(int status, std::string_view detail) {
  const std::string message =
      detail.empty() ? "upstream returned HTTP " + std::to_string(status) : std::string(detail);
  if (status == 429) {
    return Error{ErrorKind::UpstreamRateLimited, message, ""};
  }
  if (status == 401 || status == 403) {
    // Our credentials were refused: an operator's problem, not the client's, and the upstream's
    // text (which may quote the credentials) is not relayed at all.
    return Error{ErrorKind::UpstreamAuthFailed,
                 "the upstream provider refused the gateway's credentials (HTTP " +
                     std::to_string(status) + "); an operator must check its api_key",
                 ""};
  }
  if (status >= 400 && status < 500 && status != 408) {
    return Error{ErrorKind::UpstreamInvalidRequest, message, ""};
  }
  return Error{ErrorKind::UpstreamError, message, ""};
}

}  // namespace tollgate::providers

namespace tollgate::providers {
namespace {

class OpenAiExchange final : public Exchange {
 public:
  OpenAiExchange(const openai::ChatRequest& request, const config::Provider& provider,
                 const openai::ResponseMeta& meta)
      : request_(request), provider_(provider), meta_(meta) {}

  Result<UpstreamRequest> request() override {
    UpstreamRequest r;
    r.path = chatPath(provider_);
    r.body = buildChatBody(request_, provider_);
    constexpr std::size_t kUsualHeaders = 8;  // Ours, and those every attempt adds.
    r.headers.reserve(kUsualHeaders);
    r.headers.emplace_back("Accept", request_.stream ? "text/event-stream" : "application/json");
    if (!provider_.api_key.empty()) {
      r.headers.emplace_back("Authorization", "Bearer " + provider_.api_key);
    }
    return r;
  }

  Result<std::string> completion(std::string& body) override {
    return spliceCompletion(body, meta_, usage_, model_);
  }

  Result<bool> event(std::string_view, std::string& data, std::string& out) override {
    if (data == "[DONE]") {
      return true;
    }
    ChunkRewriter& rewriter = rewriter_ ? *rewriter_ : rewriter_.emplace(meta_);
    auto fast = rewriter.rewrite(data, out, usage_);
    if (fast && *fast == ChunkRewriter::Kind::Other) {
      // Data of several lines: on one line it is spliced too, every member of its choices kept.
      fast = rewriter.rewrite(oneLine(data), out, usage_);
    }
    if (!fast) {
      return std::move(fast).error();
    }
    if (*fast == ChunkRewriter::Kind::Chunk || *fast == ChunkRewriter::Kind::UsageOnly) {
      return false;
    }
    // The slow path: error events, and events the rewriter does not take (a line feed inside a
    // string, which the decoder refuses too).
    auto chunk = parseChunk(data, keep());
    if (!chunk) {
      return std::move(chunk).error();
    }
    openai::Chunk& c = **chunk;
    const bool first_usage = c.usage && !rewriter.usageRead();
    if (first_usage) {
      usage_ = c.usage;
      rewriter.markUsageRead();
    }
    if (!meta_.include_usage || !first_usage) {
      if (c.choices.empty() && c.usage) {
        return false;  // The usage chunk we asked for on our own account, or a repeated one.
      }
      c.usage.reset();
    }
    out += openai::sseData(openai::encodeChunk(c, meta_));
    return false;
  }

  Error error(int status, const std::string& body) override {
    return translateUpstreamError(status, body);
  }

  std::string_view responseModel() const override {
    if (!model_.empty() || !rewriter_) {
      return model_;
    }
    return rewriter_->model();
  }

 private:
  KeepRaw keep() const { return {meta_.include_raw_usage, meta_.include_raw_response}; }

  const openai::ChatRequest& request_;
  const config::Provider& provider_;
  const openai::ResponseMeta& meta_;
  std::optional<ChunkRewriter> rewriter_;  ///< A stream's, made at its first event.
  std::string model_;  ///< A whole answer's model (a stream's is the rewriter's).
};

class OpenAiAdapter final : public Adapter {
 public:
  std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                 const config::Provider& provider,
                                 const openai::ResponseMeta& meta) const override {
    return std::make_unique<OpenAiExchange>(request, provider, meta);
  }
  std::unique_ptr<Exchange> embed(const openai::EmbeddingRequest& request,
                                  const config::Provider& provider) const override {
    return openAiEmbedding(request, provider);
  }
  std::unique_ptr<Exchange> rerank(const openai::RerankRequest& request,
                                   const config::Provider& provider) const override {
    return openAiRerank(request, provider);
  }
  std::unique_ptr<Exchange> transcribe(const openai::TranscriptionRequest& request,
                                       const config::Provider& provider) const override {
    return openAiTranscription(request, provider);
  }
};

}  // namespace

const Adapter& openAiAdapter() {
  static const OpenAiAdapter adapter;
  return adapter;
}

}  // namespace tollgate::providers
