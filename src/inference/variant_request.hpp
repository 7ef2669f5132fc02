// A function variant applied to a chat request: the variant's parameters where the client set
// none, and its system prompt as the first message. The client's own values always win.
#pragma once

#include "config/config.hpp"
#include "openai/chat_request.hpp"

namespace tollgate::inference {

/// `request` as `variant` sends it. Its strings may point into the body the original was decoded
/// from, which must outlive it too.
openai::ChatRequest withVariant(const openai::ChatRequest& request, const config::Variant& variant);

}  // namespace tollgate::inference
