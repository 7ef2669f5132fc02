// The typed chat-completions request (spec §4.1) and its decoder, which enforces every rule of
// §4.1, §7 and §8 and names the offending parameter in the error.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.hpp"
#include "openai/fields.hpp"

namespace tollgate::openai {

/// Namespace prefix of our own request fields and model routing keys.
inline constexpr std::string_view kPrefix = "tollgate::";

struct ChatRequest {
  std::string model;  ///< As the client sent it, e.g. "gpt_4o_mini" or "tollgate::model_name::x".
  rapidjson::Document body;  ///< The validated request, kept whole for the provider adapters.
  /// The body as the client sent it, and where each member of `body` has its value in it, in
  /// body's member order: what an OpenAI-compatible upstream is sent is copied from here, not
  /// written again from the document. Empty for a request built after decoding (a variant's),
  /// whose body differs from what was sent.
  std::string sent;
  std::vector<json::Span> sent_values;
  bool stream = false;
  bool include_usage = false;  ///< stream_options.include_usage
  /// The effective output limit: the smaller of max_tokens and max_completion_tokens.
  std::optional<std::int64_t> max_completion_tokens;
  std::string service_tier = "auto";
  std::string episode_id;  ///< Empty when the client did not send one.
  std::string variant_name;
  bool dryrun = false;
  CacheOptions cache;
  Tags tags;  ///< tollgate::tags, validated.
  /// Content parts of the messages that are not text (images, audio, files): their tokens are
  /// not bounded by their bytes (an image URL of 50 bytes can cost thousands of tokens).
  std::int64_t media_parts = 0;
  /// Of media_parts, the `input_audio` ones: only a model with an input audio price takes them.
  std::int64_t audio_parts = 0;
  /// `modalities` asks for audio: only a model with an output audio price answers it.
  bool audio_output = false;
  bool include_raw_usage = false;
  bool include_raw_response = false;
};

/// Parses and validates a request body, in place: `body` is modified and the request's strings
/// point into it, so it must outlive the request. Unknown top-level fields are accepted unless
/// `tollgate::deny_unknown_fields` is true.
Result<ChatRequest> decodeChatRequest(std::string& body);

/// The JSON text member `i` of `request.body` had as the client sent it, if the request keeps it.
std::optional<std::string_view> sentValue(const ChatRequest& request, std::size_t i);

/// True for the OpenAI request fields the gateway forwards to an OpenAI-compatible upstream.
bool isForwardedField(std::string_view name);

}  // namespace tollgate::openai
