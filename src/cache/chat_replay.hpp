// Replaying a cached chat answer: a streamed answer as we sent it, assembled into the completion
// we would have sent unstreamed; a stored completion with a new request's id, time, episode and
// model string; and a stored completion as the stream we would have sent. All on our own wire
// format (openai/chat_response), not an upstream's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tollgate::cache {

/// The per-request facts a replayed answer carries instead of the stored ones.
struct Stamp {
  std::string id;
  std::int64_t created = 0;
  std::string episode_id;
  std::string model;  ///< The model string the client sent.
};

/// The `chat.completion` equivalent to the SSE bytes of a successful streamed chat completion
/// (`data: <chunk>\n\n` events ending with `data: [DONE]\n\n`): the first chunk's top-level
/// members (id, created, model, episode_id, variant_name, system_fingerprint, service_tier, and
/// any other) in their order, then for each choice by index its message (role, content: null
/// when none, or when empty beside tool calls or a refusal; refusal when streamed; tool calls
/// assembled by index: first id and name, arguments joined), finish_reason (empty when none
/// came) and logprobs (arrays joined), then the first usage a chunk carried and its
/// tollgate::raw_usage. Members of a delta or choice that the unstreamed encoder never writes are
/// left out, and so is tollgate::raw_response (an upstream's chunk, not its whole answer). nullopt
/// for anything else: no [DONE], bytes after it or an unfinished event, an error event, an event
/// that is not a chunk object, or no choice at all.
std::optional<std::string> completionFromStream(std::string_view sse);

/// `completion_json` with `s`'s id, created, episode_id and model in place of its own (members
/// it lacks are not added). Everything else is kept: numbers as their text, strings re-escaped
/// the way our encoder escapes them. Empty when `completion_json` is not valid JSON.
std::string restampCompletion(std::string_view completion_json, const Stamp& s);

/// The SSE stream our gateway would have sent for `completion_json`, stamped with `s` on every
/// chunk: per choice a first chunk with delta {role: "assistant", content: ""}, a chunk with
/// the content (with the choice's logprobs) when it is not empty, one with the refusal, one per
/// tool call (index, id, type, function name and arguments), and a chunk with the
/// finish_reason; then, when `include_usage` and the completion has usage, a chunk with no
/// choices carrying it (and tollgate::raw_usage); then `data: [DONE]\n\n`. Each chunk carries
/// the completion's other top-level members (variant_name, system_fingerprint, service_tier, …)
/// as our live chunks do, but not tollgate::raw_response. Empty when `completion_json` is not a
/// JSON object.
std::string streamFromCompletion(std::string_view completion_json, const Stamp& s,
                                 bool include_usage);

}  // namespace tollgate::cache
