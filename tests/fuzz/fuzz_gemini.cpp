// The Gemini adapter on arbitrary bytes: as a whole generateContent answer, as an SSE stream of
// GenerateContentResponse events ended by its body, as an error body, and as a client's chat
// request translated for Gemini. Invariants: what it accepts becomes valid JSON for the client
// (every streamed chunk too, re-read with our own SSE parser), a refusal is a valid error body,
// an accepted request is a JSON object whose turns are "user" or "model", and usage read from
// Gemini (final or the last seen) is consistent counts that can be priced.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/usage.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_request.hpp"
#include "openai/sse.hpp"
#include "providers/gemini/gemini.hpp"

namespace {

using tollgate::fuzz::check;
using tollgate::fuzz::checkJson;

/// `out` is whole SSE events, each holding JSON.
void checkChunks(const std::string& out) {
  tollgate::openai::SseParser parser;
  std::vector<tollgate::openai::SseEvent> events;
  check(parser.feed(out, events));
  for (const auto& e : events) {
    checkJson(e.data);
  }
}

void checkGeminiUsage(const std::optional<tollgate::openai::Usage>& usage) {
  tollgate::fuzz::checkUsage(usage);
  check(!usage || tollgate::usage::consistent(*usage));
}

void checkContents(const std::string& body) {
  rapidjson::Document doc;
  check(!tollgate::json::parse(doc, body) && doc.IsObject());
  const rapidjson::Value* contents = tollgate::json::member(doc, "contents");
  check(contents != nullptr && contents->IsArray());
  for (const rapidjson::Value& c : contents->GetArray()) {
    const auto role = tollgate::json::stringMember(c, "role").value_or("");
    check(role == "user" || role == "model");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  namespace gemini = providers::gemini;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const openai::ResponseMeta meta{"m", "e", "auto", true, true, true, std::nullopt, "v"};

  std::string whole = input;
  if (auto c = gemini::parseResponse(whole, {true, true}, 1)) {
    checkGeminiUsage(c->usage);
    checkJson(openai::encodeCompletion(*c, meta));
  } else {
    checkJson(errorBody(c.error()));
  }
  checkJson(errorBody(gemini::translateError(503, input)));

  openai::SseParser parser;
  std::vector<openai::SseEvent> events;
  if (parser.feed(input, events)) {
    gemini::StreamDecoder decoder(meta, 1);
    std::string out;
    bool failed = false;
    for (openai::SseEvent& ev : events) {
      auto step = decoder.event(ev.data, out);
      checkGeminiUsage(decoder.reportedUsage());
      if (!step) {
        checkJson(errorBody(step.error()));
        failed = true;
        break;
      }
    }
    if (!failed) {
      std::optional<openai::Usage> usage;
      decoder.finish(out, usage);
      checkGeminiUsage(usage);
    }
    checkChunks(out);
  }

  std::string request_text = input;
  if (auto request = openai::decodeChatRequest(request_text)) {
    config::Provider provider;
    provider.type = config::ProviderType::Gemini;
    provider.model = "gemini-fuzz";
    provider.default_max_tokens = 100;
    if (auto body = gemini::buildGenerateBody(*request, provider)) {
      checkContents(*body);
    } else {
      checkJson(errorBody(body.error()));
    }
  }
  return 0;
}
