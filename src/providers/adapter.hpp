// The provider adapter interface, sans I/O: an adapter turns our typed request (chat, embeddings,
// rerank, transcription) into one upstream wire's request, and that wire's answers (whole,
// streamed, or errors) back into ours.
// Transports move the bytes; the inference stage drives both. One adapter per wire, found by
// provider type in a Registry.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/result.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "openai/embedding_request.hpp"
#include "openai/rerank_request.hpp"
#include "openai/transcription_request.hpp"
#include "providers/stream_decoder.hpp"
#include "providers/upstream_request.hpp"

namespace tollgate::providers {

class Transport;

/// One attempt at one provider: its request, then the decoding of its answer. Stateful (a
/// stream decoder may carry state from one event to the next), so one per attempt.
class Exchange {
 public:
  virtual ~Exchange() = default;

  /// The request to send; called once. An error when the request cannot be said on this wire
  /// (e.g. a content part it has no block for): nothing is sent, and another provider may serve it.
  virtual Result<UpstreamRequest> request() = 0;

  /// A whole 2xx answer as our `chat.completion` body. `body` may be modified (parsed in place).
  virtual Result<std::string> completion(std::string& body) = 0;

  /// One event of a 2xx stream: appends our events (SSE-framed) to `out`; true once the stream
  /// is complete. `name` is the event's name (SSE's `event:`, empty for the default; an event
  /// stream's as eventstream::Parser names it); `data` may be modified.
  virtual Result<bool> event(std::string_view name, std::string& data, std::string& out) = 0;

  /// The upstream's stream body ended before event() said the stream was complete. A wire whose
  /// stream ends with its body (Gemini's) may complete it here, appending its last events to
  /// `out`: true. False (the default): the stream was cut.
  virtual Result<bool> streamEnded(std::string& /*out*/) { return false; }

  /// How the upstream frames a streamed answer (which fixes the Content-Type it must declare).
  virtual StreamFraming framing() const { return StreamFraming::Sse; }

  /// Secrets this attempt sent that the configuration does not hold (a signature, credentials
  /// read from a file): redacted, as the configuration's, from all the upstream answers.
  virtual std::vector<std::string> sentSecrets() const { return {}; }

  /// Our error for a non-2xx answer whose (redacted) body is `body`.
  virtual Error error(int status, const std::string& body) = 0;

  /// The Content-Type of the body completion() returns.
  virtual std::string_view contentType() const { return "application/json"; }

  /// The usage the upstream reported, once it says it is final.
  const std::optional<openai::Usage>& usage() const { return usage_; }

  /// Counts the upstream reported before its final usage (Anthropic's message_start): a stream
  /// cut before the final usage is charged at least these. None for a wire without them.
  virtual std::optional<openai::Usage> interimUsage() const { return std::nullopt; }

  /// The model the upstream says answered, cut to 128 bytes (a span attribute, never a label or
  /// part of our answer, which names the configured model); empty when it named none.
  virtual std::string_view responseModel() const { return {}; }

  /// Seconds of audio the answer covers, in milliseconds (transcriptions); 0 otherwise.
  std::int64_t audioMs() const { return audio_ms_; }

 protected:
  std::optional<openai::Usage> usage_;
  std::int64_t audio_ms_ = 0;
};

class Adapter {
 public:
  virtual ~Adapter() = default;

  /// Starts an attempt at `provider` for `request`, answered to the client under `meta`.
  virtual std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                         const config::Provider& provider,
                                         const openai::ResponseMeta& meta) const = 0;

  /// Starts an embeddings, rerank or transcription attempt; nullptr when this wire has none.
  virtual std::unique_ptr<Exchange> embed(const openai::EmbeddingRequest&,
                                          const config::Provider&) const {
    return nullptr;
  }
  virtual std::unique_ptr<Exchange> rerank(const openai::RerankRequest&,
                                           const config::Provider&) const {
    return nullptr;
  }
  virtual std::unique_ptr<Exchange> transcribe(const openai::TranscriptionRequest&,
                                               const config::Provider&) const {
    return nullptr;
  }

  /// The transport of a provider that answers in process; nullptr for network providers.
  virtual Transport* localTransport() const { return nullptr; }
};

/// The adapter of a wire that serves chat only: each attempt is an ExchangeT(request, provider,
/// meta).
template <class ExchangeT>
class ChatAdapter final : public Adapter {
 public:
  std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                 const config::Provider& provider,
                                 const openai::ResponseMeta& meta) const override {
    return std::make_unique<ExchangeT>(request, provider, meta);
  }
};

/// Adapters by provider type.
class Registry {
 public:
  void add(config::ProviderType type, const Adapter& adapter) { adapters_[type] = &adapter; }
  /// The adapter for `type`, or nullptr when none is registered.
  const Adapter* find(config::ProviderType type) const {
    auto it = adapters_.find(type);
    return it == adapters_.end() ? nullptr : it->second;
  }

 private:
  std::map<config::ProviderType, const Adapter*> adapters_;
};

/// Every built-in adapter: OpenAI-compatible, Anthropic, Azure, Gemini, Bedrock and dummy. Lives
/// for the whole process.
const Registry& builtinAdapters();

}  // namespace tollgate::providers
