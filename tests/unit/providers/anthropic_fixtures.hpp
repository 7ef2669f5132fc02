// Fixtures of the Anthropic adapter's tests: a provider, a request's upstream body or refusal,
// a whole answer parsed, and a stream run through a decoder.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/json.hpp"
#include "openai/sse.hpp"
#include "providers/anthropic/anthropic.hpp"
#include "providers/stream_fixtures.hpp"

namespace tollgate::providers::anthropic::test {

inline config::Provider provider() {
  config::Provider p;
  p.name = "claude";
  p.type = config::ProviderType::Anthropic;
  p.api_base.path = "/v1";
  p.model = "claude-upstream";
  p.api_key = "sk-ant-secret";
  p.api_version = "2023-06-01";
  p.default_max_tokens = 1234;
  return p;
}

inline openai::ChatRequest decode(std::string& text) {
  auto req = openai::decodeChatRequest(text);
  EXPECT_TRUE(req.ok()) << req.error().message;
  return std::move(req).value();
}

/// The upstream body for an OpenAI request, parsed.
inline rapidjson::Document upstreamBody(std::string request) {
  const openai::ChatRequest req = decode(request);
  auto body = buildMessagesBody(req, provider());
  EXPECT_TRUE(body.ok()) << body.error().message;
  rapidjson::Document d;
  d.Parse(body.ok() ? body->c_str() : "null");
  return d;
}

inline rapidjson::Document parsed(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text;
  return d;
}

/// Compares JSON structurally.
inline void expectJson(const rapidjson::Value& actual, std::string_view expected) {
  const auto e = parsed(expected);
  EXPECT_TRUE(actual == e) << "actual: " << json::serialize(actual) << "\nexpected: " << expected;
}

inline Error refusal(std::string request) {
  const openai::ChatRequest req = decode(request);
  auto body = buildMessagesBody(req, provider());
  EXPECT_FALSE(body.ok());
  return body.ok() ? Error{ErrorKind::Internal, "", ""} : body.error();
}

// The parsers work in place; these take their input by value.
inline Result<openai::Completion> message(std::string body, bool json = false, KeepRaw keep = {}) {
  return parseMessage(body, keep, json, 77);
}

using providers::test::Streamed;

/// Runs a stream through a decoder (stream_fixtures.hpp).
inline Streamed run(const std::vector<std::pair<std::string, std::string>>& events,
                    const openai::ResponseMeta& meta, bool json = false) {
  StreamDecoder decoder(meta, json, 42);
  return providers::test::runDecoder(decoder, events);
}

inline openai::ResponseMeta meta(bool include_usage) {
  openai::ResponseMeta m;
  m.model = "claude";
  m.episode_id = "ep";
  m.service_tier = "auto";
  m.include_usage = include_usage;
  return m;
}

}  // namespace tollgate::providers::anthropic::test
