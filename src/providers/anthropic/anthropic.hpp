// The adapter for Anthropic's Messages API: our chat-completions request becomes a `/messages`
// request (x-api-key, anthropic-version), and Anthropic's answers, whole or streamed as named SSE
// events, become our `chat.completion` and `chat.completion.chunk` objects. Sans I/O.
//
// Choices where the two wires differ:
// - response_format json_schema / json_object: sent as one forced tool (named after the schema,
//   or "json_object") whose input is the schema (`{"type":"object"}` for json_object); the
//   tool's input comes back as the message's content, with finish_reason "stop". Combined with
//   the client's own tools it is refused (the forced tool would take their tool_choice).
// - temperature: OpenAI's range is 0 to 2, Anthropic's 0 to 1; values above 1 are sent as 1.
// - Dropped silently (no Anthropic equivalent, and an answer without them is still a correct
//   answer): frequency_penalty, presence_penalty, seed, logit_bias, logprobs, top_logprobs,
//   reasoning_effort, verbosity, service_tier, stream_options (usage is always tracked).
// - Refused with a 400 (the answer would not be what the client asked for): content parts other
//   than text and image_url, tools other than functions, `function` role messages, assistant
//   tool_calls whose arguments are not a JSON object, json_schema/json_object with tools.
// - tool_choice without tools is not sent (Anthropic refuses it; OpenAI clients often send
//   "none" or "auto" with no tools).
// - cache_control ({"type":"ephemeral"}, optional ttl "5m" or "1h") on a content part, a part of
//   a system message, or a tool is sent as cache_control on the same block; anything else, or
//   more than 4 of them, is refused (anthropic_cache_control.hpp).
// - Answers: thinking blocks become reasoning_content (whole and streamed); redacted_thinking
//   blocks and signatures are dropped. The usage's cache reads and writes become the kinds of
//   our usage (anthropic_usage.hpp).
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "providers/adapter.hpp"
#include "providers/anthropic/usage.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers::anthropic {

/// The upstream path of the Messages API under the provider's api_base, e.g. "/v1/messages".
std::string messagesPath(const config::Provider& provider);

/// The Messages API body for `request`, or an InvalidValue error (param "messages", "tools" or
/// "response_format") for what Anthropic cannot be asked.
Result<std::string> buildMessagesBody(const openai::ChatRequest& request,
                                      const config::Provider& provider);

/// Whether `request` asks for JSON output (response_format json_schema or json_object), which
/// is served by a forced tool whose input becomes the content.
bool wantsJson(const openai::ChatRequest& request);

/// Our finish_reason for Anthropic's stop_reason; `json` when the forced JSON tool is in use.
std::string_view finishReason(std::string_view stop_reason, bool json);

/// A whole Messages answer, parsed in place (`body` is modified), stamped `created`.
Result<openai::Completion> parseMessage(std::string& body, KeepRaw keep, bool json,
                                        std::int64_t created);

/// Our error for an Anthropic error whose `error.type` is `type` (e.g. "overloaded_error") and
/// message `message`; `status` decides when the type is unknown or missing.
Error errorOfType(int status, std::string_view type, std::string_view message);

/// Our error for a non-2xx answer with body `body` (`{"type":"error","error":{…}}`, or anything).
Error translateError(int status, const std::string& body);

/// Turns Anthropic's stream events into our chunks, one event at a time.
class StreamDecoder {
 public:
  StreamDecoder(const openai::ResponseMeta& meta, bool json, std::int64_t created);
  StreamDecoder(const openai::ResponseMeta&& meta, bool json, std::int64_t created) = delete;

  /// Decodes one event (`data` parsed in place) and appends our SSE events to `out`. True after
  /// `message_stop`. Malformed or misplaced events are UpstreamError; an `error` event is its
  /// translation. `usage` receives the final usage, once Anthropic says it is final (with
  /// `message_delta`, or at `message_stop`).
  Result<bool> event(std::string_view name, std::string& data, std::string& out,
                     std::optional<openai::Usage>& usage);

  /// The counts reported so far, final or not: `message_start`'s are not (its output count is
  /// 1 however long the answer then is). nullopt before any.
  std::optional<openai::Usage> reportedUsage() const;

  /// The model message_start says answers, at most openai::kMaxUpstreamModelBytes; empty
  /// before it.
  const std::string& model() const { return model_; }

 private:
  void emit(openai::Chunk& c, std::string& out, const std::string& raw);
  void emitContent(std::string_view text, std::string& out);

  const openai::ResponseMeta& meta_;
  bool json_;
  std::int64_t created_;
  std::string id_;
  std::string model_;
  bool started_ = false;
  int tools_ = 0;             ///< Tool blocks seen so far: the next one's OpenAI index.
  int tool_block_ = -1;       ///< Anthropic's index of the open tool_use block, or -1.
  UsageReport usage_;         ///< The counts of message_start, updated by message_delta.
  std::string content_head_;  ///< A content chunk up to its escaped text (see emitContent).
  std::string content_tail_;  ///< …and after it.
  std::string raw_usage_;     ///< The last usage object, for tollgate::include_raw_usage.
};

/// The adapter of provider type "anthropic".
const Adapter& anthropicAdapter();

}  // namespace tollgate::providers::anthropic
