// The adapter for any upstream speaking OpenAI's chat-completions wire (OpenAI, vLLM, llama.cpp,
// Together, …): builds the upstream request (Bearer credentials) and turns its answers into ours.
// Sans I/O: a transport moves the bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "providers/adapter.hpp"

namespace tollgate::providers {

/// The upstream path for chat completions under the provider's api_base, e.g.
/// "/v1/chat/completions".
std::string chatPath(const config::Provider& provider);

/// The JSON body sent upstream: forwarded fields only, `model` set to the provider's model, the
/// effective output limit as max_completion_tokens, and usage always requested when streaming.
std::string buildChatBody(const openai::ChatRequest& request, const config::Provider& provider);

/// Which parts of an upstream answer to keep verbatim (tollgate::include_raw_usage/_response).
struct KeepRaw {
  bool usage = false;
  bool response = false;
};

/// One streamed event's data that the splicing rewriter does not take (openai_stream.hpp), parsed
/// in place (`data` is modified). nullopt for the `[DONE]`
/// marker; an `{"error":…}` event becomes the translated error.
Result<std::optional<openai::Chunk>> parseChunk(std::string& data, KeepRaw keep);

/// Our error for an upstream's non-2xx answer.
Error translateUpstreamError(int status, const std::string& body);

/// The message of an upstream's error body: its `error.message` (or string `error`, or
/// `message`), else a bounded printable excerpt of the body.
std::string upstreamMessage(const std::string& body);

/// Our error for a non-2xx status whose upstream message is `detail` (not relayed for 401 and
/// 403, whose text may quote the credentials).
Error errorForStatus(int status, std::string_view detail);

/// The adapter of provider type "openai".
const Adapter& openAiAdapter();

}  // namespace tollgate::providers
