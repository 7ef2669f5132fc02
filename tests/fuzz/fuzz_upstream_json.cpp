// The OpenAI-compatible adapter on arbitrary upstream bodies, stream events and embedding lists.
// Invariants: whatever it accepts becomes valid JSON and valid UTF-8 for the client (a whole
// answer spliced around the upstream's bytes; a chunk rewritten the same way, which accepts
// only what the chunk decoder accepts, or re-encoded by that decoder), and
// an upstream error becomes an error body that is valid JSON. Usage read from any of them is
// counts that can be priced (fuzz::checkUsage): negative, fractional or textual counts are none.
// An accepted embedding list has one item for each input sent, in index order.
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "core/prices.hpp"
#include "core/text.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_response.hpp"
#include "openai/embedding_response.hpp"
#include "openai/sse.hpp"
#include "providers/azure/azure.hpp"
#include "providers/openai/compatible.hpp"
#include "providers/openai/completion.hpp"
#include "providers/openai/stream.hpp"

namespace {

using tollgate::fuzz::check;
using tollgate::fuzz::checkJson;
using tollgate::fuzz::checkUsage;

constexpr std::size_t kSeveralInputs = 3;

/// Whether the embedding list `list` holds `inputs` items, indexed 0 to inputs - 1 in order.
bool inIndexOrder(const std::string& list, std::size_t inputs) {
  rapidjson::Document doc;
  if (tollgate::json::parse(doc, list) || !doc.IsObject() || !doc.HasMember("data") ||
      !doc["data"].IsArray() || doc["data"].Size() != inputs) {
    return false;
  }
  std::int64_t place = 0;
  for (const auto& item : doc["data"].GetArray()) {
    if (!item.IsObject() || tollgate::json::intMember(item, "index") != place++) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const openai::ResponseMeta meta{"m", "e", "auto", true, true, true, std::nullopt, ""};
  const providers::KeepRaw keep{true, true};
  // Whole answers are billed, so that the cost member is spliced into the usage object too.
  static const money::Prices kPrices = money::flatPrices(3, 7);
  openai::ResponseMeta billed = meta;
  billed.pricing = money::Pricing{&kPrices, std::numeric_limits<money::Pico>::max()};
  std::optional<openai::Usage> whole_usage;
  std::string model;
  if (auto completion =
          providers::spliceCompletion(std::string(input), billed, whole_usage, model)) {
    checkUsage(whole_usage);
    checkJson(*completion);
    check(model.size() <= 128 && text::isValidUtf8(model));
  } else {
    check(!whole_usage);
    checkJson(errorBody(completion.error()));
  }
  // The event as it came, and on one line as the adapter retries data of several lines: what
  // the rewriter takes is one valid event.
  const auto rewritten = [&](std::string_view data) {
    std::string spliced;
    std::optional<openai::Usage> usage;
    providers::ChunkRewriter rewriter(meta);
    const auto fast = rewriter.rewrite(std::string(data), spliced, usage);
    checkUsage(usage);
    if (fast && *fast == providers::ChunkRewriter::Kind::Chunk) {
      const std::string prefix = "data: ";
      const std::string suffix = "\n\n";
      check(spliced.starts_with(prefix) && spliced.ends_with(suffix));
      checkJson(spliced.substr(prefix.size(), spliced.size() - prefix.size() - suffix.size()));
    }
    return fast;
  };
  const auto fast = rewritten(input);
  const auto flat = rewritten(providers::oneLine(input));
  std::string event = input;
  auto slow = providers::parseChunk(event, keep);
  // The fast path never takes an event the decoder refuses, on one line or not.
  using Kind = providers::ChunkRewriter::Kind;
  check(!fast || (*fast != Kind::Chunk && *fast != Kind::UsageOnly) || slow);
  check(!flat || (*flat != Kind::Chunk && *flat != Kind::UsageOnly) || slow);
  if (auto& chunk = slow) {
    if (chunk->has_value()) {
      const std::string encoded = openai::encodeChunk(**chunk, meta);
      checkJson(encoded);
      // One event, however the upstream's kept raw chunk was broken into lines.
      const std::string framed = openai::sseData(encoded);
      check(framed.find_first_of("\r\n") == framed.size() - 2);
    }
  } else {
    checkJson(errorBody(chunk.error()));
  }
  checkJson(errorBody(providers::translateUpstreamError(502, input)));
  // Azure's errors, its content filter's categories named in the message, are error bodies too.
  checkJson(errorBody(providers::azure::translateError(400, input)));
  // An embedding list, asked for in floats and in base64, for one input and for several: what
  // is accepted is valid JSON with one item for each input, in index order.
  for (const bool base64 : {false, true}) {
    for (const std::size_t inputs : {std::size_t{1}, kSeveralInputs}) {
      std::string list = input;
      std::optional<openai::Usage> usage;
      if (auto rewritten = openai::rewriteEmbeddingList(
              list, openai::EmbeddingMeta{"m", base64, std::nullopt, inputs}, usage)) {
        checkJson(*rewritten);
        check(!usage || usage->prompt_tokens >= 0);
        check(inIndexOrder(*rewritten, inputs));
      }
    }
  }
  return 0;
}
