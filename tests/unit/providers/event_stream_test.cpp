// AWS's event stream framing: messages decoded from any chunking into named events, and frames
// whose CRCs or lengths are wrong refused.
#include "providers/event_stream.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "providers/stream_decoder.hpp"

namespace tollgate::providers::eventstream {
namespace {

void putBigEndian(std::string& out, std::uint32_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out += static_cast<char>((v >> (8 * i)) & 0xFFU);
  }
}

/// One message with string headers, encoded as AWS does (written here from the format's
/// description, independently of the parser).
std::string frame(const std::vector<std::pair<std::string, std::string>>& headers,
                  std::string_view payload) {
  std::string h;
  for (const auto& [name, value] : headers) {
    h += static_cast<char>(name.size());
    h += name;
    h += static_cast<char>(7);
    putBigEndian(h, static_cast<std::uint32_t>(value.size()), 2);
    h += value;
  }
  std::string out;
  putBigEndian(out, static_cast<std::uint32_t>(12 + h.size() + payload.size() + 4), 4);
  putBigEndian(out, static_cast<std::uint32_t>(h.size()), 4);
  putBigEndian(out, crc32(out), 4);
  out += h;
  out += payload;
  putBigEndian(out, crc32(out), 4);
  return out;
}

std::string event(std::string_view type, std::string_view payload) {
  return frame({{":event-type", std::string(type)},
                {":content-type", "application/json"},
                {":message-type", "event"}},
               payload);
}

TEST(EventStreamTest, Crc32IsZlibs) {
  EXPECT_EQ(crc32(""), 0U);
  EXPECT_EQ(crc32("123456789"), 0xCBF43926U);  // The check value of CRC-32/ISO-HDLC.
  EXPECT_EQ(crc32("6789", crc32("12345")), 0xCBF43926U);
}

TEST(EventStreamTest, MessagesFromAnyChunkingBecomeNamedEvents) {
  const std::string bytes =
      event("messageStart", R"({"role":"assistant"})") +
      event("contentBlockDelta", R"({"delta":{"text":"Hi"}})") +
      frame({{":message-type", "exception"}, {":exception-type", "throttlingException"}},
            R"({"message":"slow down"})");
  for (std::size_t step : {std::size_t{1}, std::size_t{7}, bytes.size()}) {
    Parser parser;
    std::vector<openai::SseEvent> out;
    for (std::size_t at = 0; at < bytes.size(); at += step) {
      ASSERT_TRUE(parser.feed(std::string_view(bytes).substr(at, step), out).ok()) << step;
    }
    ASSERT_EQ(out.size(), 3U) << step;
    EXPECT_EQ(out[0].event, "messageStart");
    EXPECT_EQ(out[0].data, R"({"role":"assistant"})");
    EXPECT_EQ(out[1].event, "contentBlockDelta");
    EXPECT_EQ(out[2].event, "exception:throttlingException");
    EXPECT_EQ(out[2].data, R"({"message":"slow down"})");
    EXPECT_FALSE(parser.pending());
  }
}

TEST(EventStreamTest, AnErrorMessageCarriesItsCodeAndText) {
  Parser parser;
  std::vector<openai::SseEvent> out;
  ASSERT_TRUE(parser
                  .feed(frame({{":message-type", "error"},
                               {":error-code", "InternalFailure"},
                               {":error-message", "try again"}},
                              ""),
                        out)
                  .ok());
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].event, "error:InternalFailure");
  EXPECT_EQ(out[0].data, "try again");
}

TEST(EventStreamTest, BadFramesAreRefused) {
  const std::string good = event("messageStop", R"({"stopReason":"end_turn"})");
  const auto refused = [](std::string bytes) {
    Parser parser;
    std::vector<openai::SseEvent> out;
    const Status s = parser.feed(bytes, out);
    return !s.ok() && s.error().kind == ErrorKind::UpstreamError && out.empty();
  };
  std::string payload_flipped = good;
  payload_flipped[good.size() - 6] ^= 0x01;
  EXPECT_TRUE(refused(payload_flipped));  // The message's CRC.
  std::string prelude_flipped = good;
  prelude_flipped[3] ^= 0x01;
  EXPECT_TRUE(refused(prelude_flipped));  // The prelude's CRC, before the length is trusted.
  std::string huge;
  putBigEndian(huge, 0x7FFFFFFFU, 4);
  putBigEndian(huge, 0, 4);
  putBigEndian(huge, crc32(huge), 4);
  EXPECT_TRUE(refused(huge));  // Refused at once, never buffered.
  EXPECT_TRUE(refused(frame({{":message-type", "event"}}, "{}")));  // No event type.
  EXPECT_TRUE(refused(frame({{":event-type", "x"}}, "{}")));        // No message type.
}

TEST(StreamDecoderTest, EachFramingHasItsContentType) {
  EXPECT_EQ(streamContentType(StreamFraming::Sse), "text/event-stream");
  EXPECT_EQ(streamContentType(StreamFraming::AwsEventStream), "application/vnd.amazon.eventstream");
  StreamDecoder sse(StreamFraming::Sse);
  std::vector<openai::SseEvent> out;
  ASSERT_TRUE(sse.feed("event: ping\ndata: {}\n\n", out).ok());
  ASSERT_EQ(out.size(), 1U);
  EXPECT_EQ(out[0].event, "ping");
}

}  // namespace
}  // namespace tollgate::providers::eventstream
