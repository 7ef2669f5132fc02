// The chat request decoder on arbitrary bodies. Invariants: an accepted request, as forwarded to
// the upstream (the client's own bytes for each member it may send), is valid UTF-8 and a
// request the gateway itself accepts, with the provider's model, the same stream flag and output
// limit, usage asked for when streaming, and exactly the allowed members with the values the
// client sent; a refused one gets an error body that is valid JSON and valid UTF-8, whatever
// bytes the request held.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/json.hpp"
#include "core/text.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_request.hpp"
#include "providers/openai/compatible.hpp"

using tollgate::fuzz::check;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  std::string body(reinterpret_cast<const char*>(data), size);
  auto req = openai::decodeChatRequest(body);
  if (req) {
    config::Provider provider;
    provider.model = "upstream-model";
    std::string upstream = providers::buildChatBody(*req, provider);
    fuzz::checkJson(upstream);
    auto again = openai::decodeChatRequest(upstream);
    check(again.ok());
    check(again->model == provider.model);
    check(again->stream == req->stream);
    check(again->include_usage == req->stream);
    // Always sent, and the limit the hold covers.
    check(again->max_completion_tokens == config::outputTokenLimit(req->max_completion_tokens,
                                                                   provider.max_output_tokens,
                                                                   provider.default_max_tokens));
    // Each allowed member arrives with the value the client sent, and nothing else does but ours.
    std::size_t allowed = 0;
    for (const auto& m : req->body.GetObject()) {
      const std::string_view name = json::view(m.name);
      if (!m.value.IsNull() && openai::isForwardedField(name)) {
        ++allowed;
        const rapidjson::Value* sent = json::member(again->body, name);
        check(sent != nullptr && *sent == m.value);
      }
    }
    const std::size_t ours = req->stream ? 3 : 2;  // model, max_completion_tokens, stream_options
    check(again->body.MemberCount() == allowed + ours);
  } else {
    fuzz::checkJson(errorBody(req.error()));
  }
  return 0;
}
