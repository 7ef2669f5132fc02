// Runs a stream of named events through an adapter's stream decoder (any class with
// `event(name, data, out, usage)`), for the tests of the adapters that decode streams.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "openai/chat_response.hpp"
#include "openai/sse.hpp"

namespace tollgate::providers::test {

/// What a decoder made of a stream: the chunks it wrote (parsed), whether it completed, the
/// error that ended it, if any, and the final usage.
struct Streamed {
  std::vector<rapidjson::Document> chunks;
  bool complete = false;
  std::optional<Error> error;
  std::optional<openai::Usage> usage;
};

template <class Decoder>
Streamed runDecoder(Decoder& decoder,
                    const std::vector<std::pair<std::string, std::string>>& events) {
  Streamed s;
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
  std::vector<openai::SseEvent> written;
  openai::SseParser parser;
  EXPECT_TRUE(parser.feed(out, written));
  for (const auto& e : written) {
    rapidjson::Document d;
    d.Parse(e.data.c_str());
    EXPECT_FALSE(d.HasParseError()) << e.data;
    s.chunks.push_back(std::move(d));
  }
  return s;
}

}  // namespace tollgate::providers::test
