// The adapter for Amazon Bedrock's Converse API: our chat-completions request becomes a Converse
// request (POST /model/{modelId}/converse, or /converse-stream), signed with SigV4 as it is sent
// (or sent with a Bedrock API key as a bearer token), and Bedrock's answers, whole or streamed as
// AWS event-stream frames, become our `chat.completion` and `chat.completion.chunk` objects.
// Sans I/O. docs/bedrock.md lists the choices where the two wires differ.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"
#include "core/usage.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "providers/adapter.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers::bedrock {

/// The most cachePoint blocks Bedrock takes in one request.
inline constexpr int kMaxCachePoints = 4;

/// The path of Converse (or ConverseStream) for the provider's model, the model id
/// percent-encoded as one segment (e.g. "/model/anthropic.claude-v2%3A1/converse").
std::string conversePath(const config::Provider& provider, bool stream);

/// The Converse body for `request`, or an InvalidValue error (param "messages", "tools",
/// "tool_choice", "response_format" or "max_tokens") for what Converse cannot be asked.
Result<std::string> buildConverseBody(const openai::ChatRequest& request,
                                      const config::Provider& provider);

/// Our finish_reason for Converse's stopReason.
std::string_view finishReason(std::string_view stop_reason);

/// The counts of a Converse usage object: prompt_tokens = inputTokens (the uncached input) +
/// cacheReadInputTokens + cacheWriteInputTokens, the reads as cached_tokens, the writes as
/// cache_write_tokens. nullopt when inputTokens or outputTokens is missing, or a count given is
/// not a count (json::countMember): the charge is then estimated, and flagged.
std::optional<usage::Counts> readUsage(const rapidjson::Value& usage);

/// A whole Converse answer, parsed in place (`body` is modified), stamped `id` and `created`.
Result<openai::Completion> parseConverse(std::string& body, KeepRaw keep, std::string id,
                                         std::int64_t created);

/// Our error for an error of Bedrock's type `type` (e.g. "ThrottlingException", or an event
/// stream's "throttlingException"), message `message`; `status` decides when the type is unknown.
Error errorOfType(int status, std::string_view type, std::string_view message);

/// Our error for a non-2xx answer with body `body` ({"message":…}, maybe with "__type").
Error translateError(int status, const std::string& body);

/// Turns ConverseStream's events into our chunks, one event at a time.
class StreamDecoder {
 public:
  StreamDecoder(const openai::ResponseMeta& meta, std::string id, std::int64_t created);
  StreamDecoder(const openai::ResponseMeta&& meta, std::string id, std::int64_t created) = delete;

  /// Decodes one event (named as eventstream::Parser names it; `data` parsed in place) and
  /// appends our SSE events to `out`. True after `metadata` (which follows messageStop).
  /// Malformed or misplaced events are UpstreamError; an exception is its translation.
  Result<bool> event(std::string_view name, std::string& data, std::string& out,
                     std::optional<openai::Usage>& usage);

  /// Whether messageStop came (a stream ending after it lacks only its usage).
  bool stopped() const { return stopped_; }

 private:
  void emit(openai::Chunk& c, std::string& out, const std::string& raw);

  const openai::ResponseMeta& meta_;
  std::string id_;
  std::int64_t created_;
  bool started_ = false;
  bool stopped_ = false;
  int tools_ = 0;        ///< Tool blocks seen so far: the next one's OpenAI index.
  int tool_block_ = -1;  ///< Converse's index of the open toolUse block, or -1.
};

/// The adapter of provider type "bedrock".
const Adapter& bedrockAdapter();

}  // namespace tollgate::providers::bedrock
