#include "providers/dummy.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "openai/sse.hpp"

namespace tollgate::providers {
namespace {

TEST(Dummy, EchoesTheLastUserMessage) {
  const LocalReply r = respondLocally(
      R"({"model":"echo","messages":[{"role":"user","content":"first"},
         {"role":"assistant","content":"x"},{"role":"user","content":"hello there"}]})");
  ASSERT_EQ(r.status, 200);
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  EXPECT_STREQ(d["choices"][0]["message"]["content"].GetString(), "hello there");
  EXPECT_STREQ(d["choices"][0]["finish_reason"].GetString(), "stop");
  EXPECT_EQ(d["usage"]["completion_tokens"].GetInt(), 2);
}

TEST(Dummy, HonoursTheTokenLimit) {
  const LocalReply r = respondLocally(
      R"({"messages":[{"role":"user","content":"a b c d"}],"max_completion_tokens":2})");
  rapidjson::Document d;
  d.Parse(r.body.c_str());
  EXPECT_STREQ(d["choices"][0]["message"]["content"].GetString(), "a b");
  EXPECT_STREQ(d["choices"][0]["finish_reason"].GetString(), "length");
}

TEST(Dummy, StreamsChunksUsageAndDone) {
  const LocalReply r = respondLocally(
      R"({"messages":[{"role":"user","content":[{"type":"text","text":"hi you"}]}],"stream":true})");
  EXPECT_EQ(r.content_type, "text/event-stream");
  openai::SseParser p;
  std::vector<openai::SseEvent> events;
  ASSERT_TRUE(p.feed(r.body, events));
  ASSERT_EQ(events.size(), 6U);  // role, "hi", " you", finish, usage, [DONE]
  EXPECT_EQ(events.back().data, "[DONE]");
  std::string text;
  for (std::size_t i = 0; i + 2 < events.size(); ++i) {
    rapidjson::Document d;
    d.Parse(events[i].data.c_str());
    const auto& delta = d["choices"][0]["delta"];
    if (delta.HasMember("content")) {
      text += delta["content"].GetString();
    }
  }
  EXPECT_EQ(text, "hi you");
}

TEST(Dummy, RejectsABodyWithoutMessages) {
  EXPECT_EQ(respondLocally("{}").status, 400);
  EXPECT_EQ(respondLocally("nonsense").status, 400);
}

}  // namespace
}  // namespace tollgate::providers
