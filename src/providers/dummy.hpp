// The `dummy` provider: an in-process stand-in for an OpenAI-compatible upstream. It answers the
// request body the OpenAI adapter built by echoing the last user message, so a new install gives
// real answers (streamed or not) with no upstream account, and tests need no network.
#pragma once

#include <string>
#include <string_view>

namespace tollgate::providers {

struct LocalReply {
  int status = 200;
  std::string content_type;
  std::string body;
};

/// The reply an OpenAI-compatible server would give to `upstream_body`.
LocalReply respondLocally(const std::string& upstream_body);

}  // namespace tollgate::providers
