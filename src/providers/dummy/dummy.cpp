#include "providers/dummy/dummy.hpp"

#include <chrono>
#include <vector>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "openai/sse.hpp"
#include "providers/dummy/endpoints.hpp"
#include "providers/transport.hpp"

namespace tollgate::providers {
namespace {

using rapidjson::Value;

constexpr const char* kFingerprint = "dummy";
constexpr std::string_view kEventStream = "text/event-stream";

/// The text of the last user message: a string, or the text parts of a content array.
std::string lastUserText(const Value& messages) {
  for (auto it = messages.End(); it != messages.Begin();) {
    --it;
    if (json::stringMember(*it, "role") != "user") {
      continue;
    }
    const Value* content = json::member(*it, "content");
    if (content == nullptr) {
      return "";
    }
    if (content->IsString()) {
      return std::string(json::view(*content));
    }
    std::string text;
    if (content->IsArray()) {
      for (const Value& part : content->GetArray()) {
        if (auto t = json::stringMember(part, "text")) {
          text += (text.empty() ? "" : " ") + std::string(*t);
        }
      }
    }
    return text;
  }
  return "";
}

/// Splits text into pieces that each count as one token: words with their leading space.
std::vector<std::string> tokens(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 1; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ' ') {
      out.emplace_back(text.substr(start, i - start));
      start = i;
    }
  }
  return out;
}

/// The echo answer, decided from the typed request.
struct Echo {
  std::vector<std::string> pieces;
  std::string finish_reason = "stop";
  openai::Usage usage;
};

Echo echo(const openai::ChatRequest& request, const config::Provider& provider) {
  Echo e;
  const Value& messages = request.body["messages"];  // Present: the decoder requires it.
  e.pieces = tokens(lastUserText(messages));
  for (const Value& m : messages.GetArray()) {
    if (auto c = json::stringMember(m, "content")) {
      e.usage.prompt_tokens += static_cast<std::int64_t>(tokens(*c).size());
    }
  }
  const auto limit = static_cast<std::size_t>(config::outputTokenLimit(
      request.max_completion_tokens, provider.max_output_tokens, provider.default_max_tokens));
  if (limit < e.pieces.size()) {
    e.pieces.resize(limit);
    e.finish_reason = "length";
  }
  e.usage.completion_tokens = static_cast<std::int64_t>(e.pieces.size());
  return e;
}

std::string completionBody(Echo e, const std::string& id, std::int64_t created,
                           const openai::ResponseMeta& meta) {
  openai::Choice choice;
  choice.finish_reason = e.finish_reason;
  choice.content.emplace();
  for (const std::string& p : e.pieces) {
    choice.content->append(p);
  }
  openai::Completion c;
  c.id = id;
  c.created = created;
  c.system_fingerprint = kFingerprint;
  c.choices.push_back(std::move(choice));
  c.usage = e.usage;
  return openai::encodeCompletion(c, meta);
}

std::string streamBody(Echo e, const std::string& id, std::int64_t created,
                       const openai::ResponseMeta& meta) {
  std::string body;
  const auto event = [&](std::optional<openai::ChoiceDelta> delta, std::optional<openai::Usage> u) {
    openai::Chunk c;
    c.id = id;
    c.created = created;
    c.system_fingerprint = kFingerprint;
    if (delta) {
      c.choices.push_back(std::move(*delta));
    }
    c.usage = u;
    body += openai::sseData(openai::encodeChunk(c, meta));
  };
  openai::ChoiceDelta first;
  first.role = "assistant";
  first.content = "";
  event(std::move(first), std::nullopt);
  for (std::string& p : e.pieces) {
    openai::ChoiceDelta d;
    d.content = std::move(p);
    event(std::move(d), std::nullopt);
  }
  openai::ChoiceDelta last;
  last.finish_reason = e.finish_reason;
  event(std::move(last), std::nullopt);
  if (meta.include_usage) {
    event(std::nullopt, e.usage);
  }
  body += openai::kSseDone;
  return body;
}

/// The answer is already in our wire format: passed through untouched.
class DummyExchange final : public Exchange {
 public:
  DummyExchange(const openai::ChatRequest& request, const config::Provider& provider,
                const openai::ResponseMeta& meta)
      : stream_(request.stream) {
    Echo e = echo(request, provider);
    usage_ = e.usage;
    const std::string id = "chatcmpl-" + ids::uuidV7();
    const std::int64_t created = std::chrono::duration_cast<std::chrono::seconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    answer_ = stream_ ? streamBody(std::move(e), id, created, meta)
                      : completionBody(std::move(e), id, created, meta);
  }

  /// The in-process transport answers with this request's body and content type.
  Result<UpstreamRequest> request() override {
    UpstreamRequest r;
    r.content_type = stream_ ? kEventStream : "application/json";
    r.body = std::move(answer_);
    return r;
  }

  Result<std::string> completion(std::string& body) override { return std::move(body); }

  Result<bool> event(std::string_view, std::string& data, std::string& out) override {
    if (data == "[DONE]") {
      return true;
    }
    out.append("data: ").append(data).append("\n\n");
    return false;
  }

  Error error(int status, const std::string&) override {
    return Error{ErrorKind::Internal, "the dummy provider failed with " + std::to_string(status),
                 ""};
  }

 private:
  bool stream_;
  std::string answer_;
};

/// Answers every request with its own body: the answer DummyExchange prepared.
class LoopbackTransport final : public Transport {
 public:
  boost::asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> start(
      const config::Provider&, UpstreamRequest request) override {
    co_return std::unique_ptr<UpstreamCall>(std::make_unique<BufferedCall>(
        200, std::move(request.content_type), std::move(request.body)));
  }
};

class DummyAdapter final : public Adapter {
 public:
  std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                 const config::Provider& provider,
                                 const openai::ResponseMeta& meta) const override {
    return std::make_unique<DummyExchange>(request, provider, meta);
  }
  std::unique_ptr<Exchange> embed(const openai::EmbeddingRequest& request,
                                  const config::Provider&) const override {
    return dummyEmbedding(request);
  }
  std::unique_ptr<Exchange> rerank(const openai::RerankRequest& request,
                                   const config::Provider&) const override {
    return dummyRerank(request);
  }
  std::unique_ptr<Exchange> transcribe(const openai::TranscriptionRequest& request,
                                       const config::Provider&) const override {
    return dummyTranscription(request);
  }
  Transport* localTransport() const override { return &transport_; }

 private:
  mutable LoopbackTransport transport_;  // Stateless: safe to share between threads.
};

}  // namespace

const Adapter& dummyAdapter() {
  static const DummyAdapter adapter;
  return adapter;
}

}  // namespace tollgate::providers
