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
#include "providers/json_fixtures.hpp"

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
  return providers::test::decodedRequest(text);
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
  return providers::test::parsedJson(text);
}

/// Compares JSON structurally.
inline void expectJson(const rapidjson::Value& actual, std::string_view expected) {
  providers::test::expectSameJson(actual, expected);
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

/// Runs a stream through a decoder: the chunks it wrote (parsed), whether it completed, and the
/// error that ended it, if any.
struct Streamed {
  std::vector<rapidjson::Document> chunks;
  bool complete = false;
  std::optional<Error> error;
  std::optional<openai::Usage> usage;
};

inline Streamed run(const std::vector<std::pair<std::string, std::string>>& events,
                    const openai::ResponseMeta& meta, bool json = false) {
  Streamed s;
  StreamDecoder decoder(meta, json, 42);
  std::string out;
  for (const auto& [name, data] : events) {
    std::string d = data;
    auto r = decoder.event(name, d, out, s.usage);
    if (!r) {
      s.error = r.error();
      break;
    }
    s.complete = *r;
  }
  s.chunks = providers::test::sseChunks(out);
  return s;
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
