// Fixtures the tests of translating adapters share: JSON parsed and compared structurally, a
// client's chat request decoded, and the chunks an adapter's stream decoder wrote.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "openai/chat_request.hpp"
#include "openai/sse.hpp"

namespace tollgate::providers::test {

inline rapidjson::Document parsedJson(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

/// Compares JSON structurally.
inline void expectSameJson(const rapidjson::Value& actual, std::string_view expected) {
  const auto e = parsedJson(expected);
  EXPECT_TRUE(actual == e) << "actual: " << json::serialize(actual) << "\nexpected: " << expected;
}

inline openai::ChatRequest decodedRequest(std::string& text) {
  auto req = openai::decodeChatRequest(text);
  EXPECT_TRUE(req.ok()) << req.error().message;
  return std::move(req).value();
}

/// The SSE events a stream decoder wrote to `out`, each parsed.
inline std::vector<rapidjson::Document> sseChunks(const std::string& out) {
  std::vector<openai::SseEvent> events;
  openai::SseParser parser;
  EXPECT_TRUE(parser.feed(out, events));
  std::vector<rapidjson::Document> chunks;
  for (const auto& e : events) {
    chunks.push_back(parsedJson(e.data));
  }
  return chunks;
}

}  // namespace tollgate::providers::test
