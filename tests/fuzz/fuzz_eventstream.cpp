// AWS's event stream and Bedrock's adapter on arbitrary bytes: the bytes as event-stream frames
// (fed in two pieces, split where the input says), each event they complete decoded as one
// ConverseStream; the bytes as a whole Converse answer, as an error body, and as a client's chat
// request translated for Converse. Invariants: the frame parser never reads past its input and
// names every event it yields; what the decoder accepts becomes valid JSON for the client (every
// streamed chunk); refusals are valid error bodies; usage is counts that can be priced; an
// accepted request is a valid Converse body with alternating turns and at most 4 cache points.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/usage.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_request.hpp"
#include "providers/bedrock/bedrock.hpp"
#include "providers/event_stream.hpp"

namespace {

using tollgate::fuzz::check;
using tollgate::fuzz::checkJson;

/// Turns alternate; at most kMaxCachePoints cachePoint blocks anywhere.
void checkConverse(const std::string& body) {
  rapidjson::Document doc;
  check(!tollgate::json::parse(doc, body) && doc.IsObject());
  const rapidjson::Value* messages = tollgate::json::member(doc, "messages");
  check(messages != nullptr && messages->IsArray());
  tollgate::fuzz::checkTurns(*messages);
  const auto points_in = [](const rapidjson::Value* blocks) {
    std::size_t n = 0;
    if (blocks != nullptr && blocks->IsArray()) {
      for (const rapidjson::Value& b : blocks->GetArray()) {
        n += tollgate::json::member(b, "cachePoint") != nullptr ? 1 : 0;
      }
    }
    return n;
  };
  const rapidjson::Value* tool_config = tollgate::json::member(doc, "toolConfig");
  std::size_t points =
      points_in(tollgate::json::member(doc, "system")) +
      points_in(tool_config != nullptr ? tollgate::json::member(*tool_config, "tools") : nullptr);
  for (const rapidjson::Value& m : messages->GetArray()) {
    points += points_in(tollgate::json::member(m, "content"));
  }
  check(points <= static_cast<std::size_t>(tollgate::providers::bedrock::kMaxCachePoints));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  namespace bedrock = providers::bedrock;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const openai::ResponseMeta meta{"m", "e", "auto", true, true, true, std::nullopt, "v"};

  providers::eventstream::Parser parser;
  std::vector<openai::SseEvent> events;
  const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
  if (parser.feed(std::string_view(input).substr(0, split), events) &&
      parser.feed(std::string_view(input).substr(split), events)) {
    bedrock::StreamDecoder decoder(meta, "chatcmpl-fuzz", 1);
    for (const openai::SseEvent& ev : events) {
      check(!ev.event.empty());
    }
    tollgate::fuzz::checkStream(decoder, events, [](const bedrock::StreamDecoder&) {});
  }

  std::string whole = input;
  if (auto c = bedrock::parseConverse(whole, {true, true}, "chatcmpl-fuzz", 1)) {
    tollgate::fuzz::checkAdapterUsage(c->usage);
    checkJson(openai::encodeCompletion(*c, meta));
  } else {
    checkJson(errorBody(c.error()));
  }
  checkJson(errorBody(bedrock::translateError(400, input)));

  std::string request_text = input;
  if (auto request = openai::decodeChatRequest(request_text)) {
    config::Provider provider;
    provider.type = config::ProviderType::Bedrock;
    provider.model = "anthropic.claude-fuzz-v1:0";
    if (auto body = bedrock::buildConverseBody(*request, provider)) {
      checkConverse(*body);
    } else {
      checkJson(errorBody(body.error()));
    }
  }
  return 0;
}
