// Fixtures of the Gemini adapter's tests: its provider, and a client's request built for it.
#pragma once

#include <string>

#include "providers/gemini/gemini.hpp"
#include "providers/json_fixtures.hpp"

namespace tollgate::providers::gemini::test {

using providers::test::expectSameJson;
using providers::test::parsedJson;

inline config::Provider geminiProvider() {
  config::Provider p;
  p.type = config::ProviderType::Gemini;
  p.api_base.path = "/v1beta";
  p.model = "gemini-upstream";
  p.api_key = "goog-secret";
  p.default_max_tokens = 2000;
  return p;
}

/// The generateContent body built for `request` (an OpenAI body), or its refusal.
inline Result<std::string> built(std::string request) {
  return buildGenerateBody(providers::test::decodedRequest(request), geminiProvider());
}

}  // namespace tollgate::providers::gemini::test
