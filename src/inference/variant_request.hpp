// A function variant applied to a chat request: the variant's parameters where the client set
// none, and its system prompt as the first message. The client's own values always win.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "config/config.hpp"
#include "openai/chat_request.hpp"

namespace tollgate::inference {

/// The output limit `request` is sent with under `variant` (nullptr: a plain model): the
/// client's own, else the variant's max_tokens.
std::optional<std::int64_t> outputLimit(const openai::ChatRequest& request,
                                        const config::Variant* variant);

/// The most bytes `variant` (nullptr: a plain model) adds to a request's body: its system
/// message, whose tokens the hold must cover as it covers the client's own messages.
std::size_t variantPromptBytes(const config::Variant* variant);

/// `request` as `variant` sends it. Its strings may point into the body the original was decoded
/// from, which must outlive it too.
openai::ChatRequest withVariant(const openai::ChatRequest& request, const config::Variant& variant);

}  // namespace tollgate::inference
