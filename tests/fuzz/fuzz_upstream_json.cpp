// The OpenAI-compatible adapter on arbitrary upstream bodies, stream events and embedding lists.
// Invariants: whatever it accepts re-encodes for the client as valid JSON and valid UTF-8 (the
// splicing chunk rewriter's output too, which also accepts only what the decoder accepts), and
// an upstream error becomes an error body that is valid JSON. Usage read from any of them is
// counts that can be priced (fuzz::checkUsage): negative, fractional or textual counts are none.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/json.hpp"
#include "core/text.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_response.hpp"
#include "openai/embedding_response.hpp"
#include "openai/sse.hpp"
#include "providers/openai_compatible.hpp"
#include "providers/openai_stream.hpp"

namespace {

using tollgate::fuzz::check;
using tollgate::fuzz::checkJson;
using tollgate::fuzz::checkUsage;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const openai::ResponseMeta meta{"m", "e", "auto", true, true, true, std::nullopt, ""};
  const providers::KeepRaw keep{true, true};
  std::string body = input;
  if (auto completion = providers::parseCompletion(body, keep)) {
    checkUsage(completion->usage);
    checkJson(openai::encodeCompletion(*completion, meta));
  } else {
    checkJson(errorBody(completion.error()));
  }
  std::string spliced;
  std::optional<openai::Usage> usage;
  providers::ChunkRewriter rewriter(meta);
  const auto fast = rewriter.rewrite(input, spliced, usage);
  checkUsage(usage);
  if (fast && *fast == providers::ChunkRewriter::Kind::Chunk) {
    const std::string prefix = "data: ";
    const std::string suffix = "\n\n";
    check(spliced.starts_with(prefix) && spliced.ends_with(suffix));
    checkJson(spliced.substr(prefix.size(), spliced.size() - prefix.size() - suffix.size()));
  }
  std::string event = input;
  auto slow = providers::parseChunk(event, keep);
  // The fast path never takes an event the decoder refuses.
  using Kind = providers::ChunkRewriter::Kind;
  check(!fast || (*fast != Kind::Chunk && *fast != Kind::UsageOnly) || slow);
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
  // An embedding list, asked for in floats and in base64: what is accepted is valid JSON.
  for (const bool base64 : {false, true}) {
    std::string list = input;
    std::optional<openai::Usage> usage;
    if (auto rewritten = openai::rewriteEmbeddingList(
            list, openai::EmbeddingMeta{"m", base64, std::nullopt}, usage)) {
      checkJson(*rewritten);
      check(!usage || usage->prompt_tokens >= 0);
    }
  }
  return 0;
}
