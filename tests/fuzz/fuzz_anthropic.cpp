// The Anthropic adapter on arbitrary bytes: as a whole Messages answer, as an SSE stream of named
// events (decoded one after the other, as one stream), as an error body, and as a client's chat
// request translated for Anthropic. Invariants: what it accepts becomes valid JSON and UTF-8 for
// the client (every streamed chunk too), a refusal is a valid error body, and an accepted request
// becomes a Messages body that is valid JSON with the provider's model and alternating turns (and
// at most 4 cache breakpoints); usage read from Anthropic has its kinds within its totals.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/usage.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_request.hpp"
#include "openai/sse.hpp"
#include "providers/anthropic/anthropic.hpp"
#include "providers/anthropic/cache_control.hpp"

namespace {

using tollgate::fuzz::check;
using tollgate::fuzz::checkJson;

/// The blocks of `blocks` (an array, or anything) with a cache_control, tool results' included.
int cacheControls(const rapidjson::Value* blocks) {
  int n = 0;
  if (blocks != nullptr && blocks->IsArray()) {
    for (const rapidjson::Value& b : blocks->GetArray()) {
      n += (tollgate::json::member(b, "cache_control") != nullptr ? 1 : 0) +
           cacheControls(tollgate::json::member(b, "content"));
    }
  }
  return n;
}

/// The request body's messages alternate between user and assistant turns, and it has at most
/// kMaxCacheBreakpoints blocks with a cache_control.
void checkMessages(const std::string& body) {
  rapidjson::Document doc;
  check(!tollgate::json::parse(doc, body) && doc.IsObject());
  check(tollgate::json::stringMember(doc, "model").value_or("") == "claude-fuzz");
  const rapidjson::Value* messages = tollgate::json::member(doc, "messages");
  check(messages != nullptr && messages->IsArray());
  tollgate::fuzz::checkTurns(*messages);
  int breakpoints = cacheControls(tollgate::json::member(doc, "system")) +
                    cacheControls(tollgate::json::member(doc, "tools"));
  for (const rapidjson::Value& m : messages->GetArray()) {
    breakpoints += cacheControls(tollgate::json::member(m, "content"));
  }
  check(breakpoints <= tollgate::providers::anthropic::kMaxCacheBreakpoints);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  namespace anthropic = providers::anthropic;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const openai::ResponseMeta meta{"m", "e", "auto", true, true, true, std::nullopt, "v"};

  std::string whole = input;
  if (auto c = anthropic::parseMessage(whole, {true, true}, (size & 1) != 0, 1)) {
    tollgate::fuzz::checkAdapterUsage(c->usage);
    checkJson(openai::encodeCompletion(*c, meta));
  } else {
    checkJson(errorBody(c.error()));
  }
  checkJson(errorBody(anthropic::translateError(529, input)));

  openai::SseParser parser;
  std::vector<openai::SseEvent> events;
  if (parser.feed(input, events)) {
    anthropic::StreamDecoder decoder(meta, (size & 2) != 0, 1);
    tollgate::fuzz::checkStream(decoder, events, [](const anthropic::StreamDecoder& d) {
      tollgate::fuzz::checkAdapterUsage(d.reportedUsage());
    });
  }

  std::string request_text = input;
  if (auto request = openai::decodeChatRequest(request_text)) {
    config::Provider provider;
    provider.type = config::ProviderType::Anthropic;
    provider.model = "claude-fuzz";
    if (auto body = anthropic::buildMessagesBody(*request, provider)) {
      checkMessages(*body);
    } else {
      checkJson(errorBody(body.error()));
    }
  }
  return 0;
}
