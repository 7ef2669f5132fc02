// Fixtures of the Gemini adapter's tests: a provider, a request decoded and built, JSON compared.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "core/json.hpp"
#include "providers/gemini/gemini.hpp"

namespace tollgate::providers::gemini::test {

inline config::Provider geminiProvider() {
  config::Provider p;
  p.name = "gem";
  p.type = config::ProviderType::Gemini;
  p.api_base.path = "/v1beta";
  p.model = "gemini-upstream";
  p.api_key = "goog-secret";
  p.default_max_tokens = 2000;
  return p;
}

/// The generateContent body built for `request` (an OpenAI body), or its refusal.
inline Result<std::string> built(std::string request) {
  auto req = openai::decodeChatRequest(request);
  EXPECT_TRUE(req.ok()) << req.error().message;
  if (!req) {
    return req.error();
  }
  return buildGenerateBody(*req, geminiProvider());
}

inline rapidjson::Document doc(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

inline void sameJson(const rapidjson::Value& actual, std::string_view expected) {
  const auto e = doc(expected);
  EXPECT_TRUE(actual == e) << "actual:   " << json::serialize(actual) << "\nexpected: " << expected;
}

}  // namespace tollgate::providers::gemini::test
