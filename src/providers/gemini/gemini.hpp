// The adapter for Google AI's Gemini API: our chat-completions request becomes a
// `models/{model}:generateContent` request (or `:streamGenerateContent?alt=sse`), the key in
// `x-goog-api-key` only, and Gemini's answers, whole or streamed, become our `chat.completion`
// and `chat.completion.chunk` objects. Embeddings go through `embedContent` or
// `batchEmbedContents`. Sans I/O. docs/gemini.md says what is mapped, dropped and refused.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/result.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "openai/embedding_request.hpp"
#include "providers/adapter.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers::gemini {

/// The path of `method` (e.g. "generateContent") of the provider's model under its api_base,
/// e.g. "/v1beta/models/gemini-2.5-flash:generateContent"; the model is percent-encoded.
std::string modelPath(const config::Provider& provider, std::string_view method);

/// The generateContent body for `request`, or an InvalidValue error (param "messages", "tools",
/// "tool_choice", "max_tokens" or "response_format") for what Gemini cannot be asked.
Result<std::string> buildGenerateBody(const openai::ChatRequest& request,
                                      const config::Provider& provider);

/// Our finish_reason for Gemini's finishReason; `tool_calls` when the candidate called a function.
std::string_view finishReason(std::string_view reason, bool tool_calls);

/// The usage of a `usageMetadata` object: nullopt when a count is not a count, promptTokenCount
/// is missing, or the cached tokens exceed the prompt (the charge is then estimated, and flagged).
std::optional<openai::Usage> readUsage(const rapidjson::Value& metadata);

/// Between a tool call's id and the thoughtSignature of its functionCall part, when it had one
/// (`call_0__thought_signature__<signature>`): sent back with the call on the next turn.
inline constexpr std::string_view kSignatureMark = "__thought_signature__";

/// What one candidate's `content.parts` say: text, thinking (parts with `thought: true`) and
/// function calls, whose ids Gemini does not give reliably: `call_<n>`, n counted from `calls`.
struct Parts {
  std::optional<std::string> text;
  std::optional<std::string> reasoning;
  std::vector<openai::ToolCall> calls;
};

/// The parts of `candidate` (a GenerateContentResponse's candidates[0]); UpstreamError when they
/// are not parts.
Result<Parts> readParts(const rapidjson::Value& candidate, int& calls);

/// A whole generateContent answer, parsed in place (`body` is modified), stamped `created`.
/// A prompt blocked by the safety filters (promptFeedback.blockReason, no candidates) is 400
/// upstream_invalid_request naming the reason.
Result<openai::Completion> parseResponse(std::string& body, KeepRaw keep, std::int64_t created);

/// Our error for Gemini's `error.status` (e.g. "RESOURCE_EXHAUSTED") and message; `status`
/// (HTTP) decides when the status is unknown or missing.
Error errorOfStatus(int status, std::string_view code, std::string_view message);

/// Our error for a non-2xx answer with body `body` (`{"error":{code,message,status}}`, or
/// anything).
Error translateError(int status, const std::string& body);

/// Turns Gemini's streamed GenerateContentResponse objects into our chunks, one event at a time.
/// Gemini's stream has no end marker: it ends with its body (finish()).
class StreamDecoder {
 public:
  StreamDecoder(const openai::ResponseMeta& meta, std::int64_t created);
  StreamDecoder(const openai::ResponseMeta&& meta, std::int64_t created) = delete;

  /// Decodes one event (`data` parsed in place) and appends our SSE events to `out`. Never
  /// complete by itself. Malformed events are UpstreamError; an `{"error":…}` event is its
  /// translation; a blocked prompt is UpstreamInvalidRequest.
  Result<bool> event(std::string& data, std::string& out);

  /// The body ended: complete (true) when a finishReason was seen, the usage chunk appended when
  /// the client asked for it and `usage` set to the last usageMetadata; false when cut.
  bool finish(std::string& out, std::optional<openai::Usage>& usage);

  /// The last usageMetadata's counts (Gemini repeats them cumulatively); nullopt before any or
  /// when invalid.
  const std::optional<openai::Usage>& reportedUsage() const { return usage_; }

  /// The model the answers name (modelVersion), at most openai::kMaxUpstreamModelBytes.
  const std::string& model() const { return model_; }

 private:
  void emit(openai::ChoiceDelta d, std::string& out, const std::string& raw);

  const openai::ResponseMeta& meta_;
  std::int64_t created_;
  std::string id_;
  std::string model_;
  bool started_ = false;
  bool finished_ = false;
  int tools_ = 0;  ///< Function calls seen so far: the next one's index and id.
  std::optional<openai::Usage> usage_;
  std::string raw_usage_;
};

/// An embeddings attempt: one input through embedContent, several through batchEmbedContents.
std::unique_ptr<Exchange> embedding(const openai::EmbeddingRequest& request,
                                    const config::Provider& provider);

/// Adds the provider's key to `r`, in x-goog-api-key: never a `?key=` query parameter, which
/// would leak into logs.
void withKey(UpstreamRequest& r, const config::Provider& provider);

/// The adapter of provider type "gemini".
const Adapter& geminiAdapter();

}  // namespace tollgate::providers::gemini
