#include "openai/sse.hpp"

#include <gtest/gtest.h>

namespace tollgate::openai {
namespace {

std::vector<SseEvent> feedInPieces(std::string_view text, std::size_t piece) {
  SseParser p;
  std::vector<SseEvent> out;
  for (std::size_t i = 0; i < text.size(); i += piece) {
    EXPECT_TRUE(p.feed(text.substr(i, piece), out));
  }
  return out;
}

TEST(SseParser, SplitsEventsWhateverTheChunking) {
  const std::string_view text =
      "data: {\"a\":1}\n\n: keep-alive\n\ndata: {\"b\":2}\r\n\r\nevent: error\ndata: x\rdata: y\r\r"
      "data: [DONE]\n\n";
  for (std::size_t piece : {1U, 2U, 3U, 7U, 1000U}) {
    const auto events = feedInPieces(text, piece);
    ASSERT_EQ(events.size(), 4U) << "piece " << piece;
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].data, "{\"b\":2}");
    EXPECT_EQ(events[2].event, "error");
    EXPECT_EQ(events[2].data, "x\ny");
    EXPECT_EQ(events[3].data, "[DONE]");
  }
}

TEST(SseParser, HoldsAnUnfinishedEvent) {
  SseParser p;
  std::vector<SseEvent> out;
  EXPECT_TRUE(p.feed("data: {\"a\"", out));
  EXPECT_TRUE(out.empty());
  EXPECT_TRUE(p.pending());
  EXPECT_TRUE(p.feed(":1}\n\n", out));
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, "{\"a\":1}");
  EXPECT_FALSE(p.pending());
}

TEST(SseParser, DataWithoutSpaceAndIgnoredFields) {
  SseParser p;
  std::vector<SseEvent> out;
  EXPECT_TRUE(p.feed("id: 7\nretry: 10\ndata:x\n\n\n\n", out));
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].data, "x");
}

TEST(SseParser, RefusesOversizedEvents) {
  SseParser p(16);
  std::vector<SseEvent> out;
  EXPECT_FALSE(p.feed("data: 0123456789abcdefghij\n\n", out));
}

TEST(SseWriter, FormatsDataEvents) {
  EXPECT_EQ(sseData("{\"a\":1}"), "data: {\"a\":1}\n\n");
  EXPECT_EQ(kSseDone, "data: [DONE]\n\n");
}

TEST(SseWriter, LineBreaksInTheJsonNeverEndTheEventEarly) {
  // An upstream's chunk kept raw may span lines; between JSON tokens they are whitespace.
  EXPECT_EQ(sseData("{\"a\":\r\n{\"b\":\n1}}"), "data: {\"a\":  {\"b\": 1}}\n\n");
}

}  // namespace
}  // namespace tollgate::openai
