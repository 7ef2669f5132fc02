// The chat request decoder on arbitrary bodies. Invariants: an accepted request re-encodes for
// the upstream as JSON the gateway itself accepts; a refused one gets an error body that is
// valid JSON and valid UTF-8, whatever bytes the request held.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/chat_request.hpp"
#include "providers/openai_compatible.hpp"

namespace {

void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate;
  std::string body(reinterpret_cast<const char*>(data), size);
  auto req = openai::decodeChatRequest(body);
  rapidjson::Document doc;
  if (req) {
    const std::string upstream = providers::buildChatBody(*req, config::Provider{});
    check(!json::parse(doc, upstream));
    check(doc.IsObject());
  } else {
    const std::string error = errorBody(req.error());
    check(text::isValidUtf8(error));
    check(!json::parse(doc, error));
  }
  return 0;
}
