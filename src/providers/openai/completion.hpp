// The whole answer of an OpenAI-compatible upstream as ours, spliced rather than re-encoded
// (providers/openai/splice.hpp): every member of each choice and its message reaches the client
// as the upstream wrote it (reasoning_content, refusal, annotations, audio, members unknown to
// us), and so does the usage object, with our cost member added.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "openai/chat_response.hpp"

namespace tollgate::providers {

/// Our `chat.completion` for the upstream's 2xx body `body`: the upstream's id, created,
/// system_fingerprint, choices and usage around our members (as openai::encodeCompletion writes
/// them, in its order); a usage of zeros when the upstream sent no usage object. `usage`
/// receives the upstream's counts when they are counts (else nullopt: the charge is estimated),
/// `model` the model it says answered (splice::modelOf; empty when it named none).
/// UpstreamError (502) for a body that is not a JSON object within the depth and UTF-8 rules,
/// that repeats a member we keep, has no choices, or a choice that is not an object with a
/// message object, or a tool call without a function object.
Result<std::string> spliceCompletion(const std::string& body, const openai::ResponseMeta& meta,
                                     std::optional<openai::Usage>& usage, std::string& model);

}  // namespace tollgate::providers
