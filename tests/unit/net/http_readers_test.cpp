#include "net/http_readers.hpp"

#include <gtest/gtest.h>

#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_to_string.hpp>
#include <string>

namespace tollgate::net {
namespace {

using RStep = RequestReader::Step;
using UStep = ResponseReader::Step;

void append(boost::beast::flat_buffer& buffer, std::string_view bytes) {
  boost::asio::buffer_copy(buffer.prepare(bytes.size()), boost::asio::buffer(bytes));
  buffer.commit(bytes.size());
}

/// Parses a whole request that is already buffered: its head's step, then the last step.
std::pair<RStep, RStep> parseBuffered(RequestReader& reader, boost::beast::flat_buffer& buffer) {
  const RStep head = reader.parse(buffer);
  return {head, head == RStep::HeadDone ? reader.parse(buffer) : head};
}

TEST(RequestReader, ReadsAHeadThenTheBodyAndLeavesThePipelinedNext) {
  boost::beast::flat_buffer buffer;
  append(buffer,
         "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
         "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  RequestReader reader(1024, 1024);
  EXPECT_EQ(reader.parse(buffer), RStep::HeadDone);
  EXPECT_EQ(reader.parse(buffer), RStep::Complete);
  EXPECT_EQ(reader.request().body().memory(), "{}");
  EXPECT_EQ(boost::beast::buffers_to_string(buffer.data()).rfind("GET /health", 0), 0U);
}

TEST(RequestReader, KeepsTheHeadAsSent) {
  boost::beast::flat_buffer buffer;
  append(buffer,
         "PATCH /a?b=1 HTTP/1.0\r\nX-Forwarded-For: 1.1.1.1\r\nContent-Type: text/plain\r\n"
         "x-forwarded-for:2.2.2.2 \r\nX-Empty:\r\ncontent-type: application/json\r\n\r\n");
  RequestReader reader(1024, 1024);
  ASSERT_EQ(parseBuffered(reader, buffer).second, RStep::Complete);
  const RequestParser& req = reader.request();
  EXPECT_EQ(req.method(), "PATCH");
  EXPECT_EQ(req.target(), "/a?b=1");
  EXPECT_EQ(req.version(), 10U);
  const HeadFields& fields = req.fields();
  ASSERT_EQ(fields.size(), 5U);
  EXPECT_EQ(fields[2].name, "x-forwarded-for");
  EXPECT_EQ(fields[2].value, "2.2.2.2");
  EXPECT_EQ(fields[1].code, http1::Field::ContentType);
  EXPECT_EQ(fields[3].code, http1::Field::Other);
  EXPECT_EQ(fields[3].value, "");
  // The first of a repeated field, by its name in any case or by its code; all of them joined.
  EXPECT_EQ(fields.find("X-FORWARDED-FOR"), "1.1.1.1");
  EXPECT_EQ(fields.find(http1::Field::ContentType), "text/plain");
  EXPECT_EQ(fields.joined("X-Forwarded-For"), "1.1.1.1,2.2.2.2");
  EXPECT_EQ(fields.find("X-Forwarded"), "");
  EXPECT_EQ(fields.find(http1::Field::Host), "");
  EXPECT_EQ(fields.joined("Host"), "");

  // More fields than are kept in place.
  std::string many = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 40; ++i) {
    many += "X-" + std::to_string(i) + ": v" + std::to_string(i) +
            "\r\nX-All: " + std::to_string(i) + "\r\n";
  }
  append(buffer, many + "\r\n");
  RequestReader big(4096, 1024);
  ASSERT_EQ(parseBuffered(big, buffer).second, RStep::Complete);
  const HeadFields& all = big.request().fields();
  ASSERT_EQ(all.size(), 81U);
  EXPECT_EQ(all[79].name, "X-39");
  EXPECT_EQ(all[80].value, "39");
  EXPECT_EQ(all.find("x-39"), "v39");
  EXPECT_EQ(all.find(http1::Field::Host), "x");
  EXPECT_EQ(all.joined("X-All").size(), 10 + 2 * 30 + 39);  // "0,1,…,39"
}

TEST(RequestReader, RefusesAmbiguousFraming) {
  const std::string smuggled = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
  for (const std::string head : {
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
           "Transfer-Encoding: chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n",
           "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
           "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
           "GET / HTTP/1.1\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
           "GET / HTTP/1.1\r\nHost: a\r\nAuthorization: Bearer x\r\nauthorization: Bearer "
           "y\r\n\r\n",
       }) {
    boost::beast::flat_buffer buffer;
    append(buffer, head + smuggled);
    RequestReader reader(1024, 1024);
    const auto [first, last] = parseBuffered(reader, buffer);
    EXPECT_EQ(last, RStep::Failed) << head;
    EXPECT_EQ(reader.error().kind, ErrorKind::InvalidValue) << head;
  }
}

TEST(RequestReader, AcceptsChunkedAndHttp10Requests) {
  boost::beast::flat_buffer buffer;
  append(buffer,
         "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n");
  RequestReader chunked(1024, 1024);
  EXPECT_EQ(parseBuffered(chunked, buffer).second, RStep::Complete);
  EXPECT_EQ(chunked.request().body().memory(), "{}");
  append(buffer, "GET /health HTTP/1.0\r\n\r\n");
  RequestReader old(1024, 1024);
  EXPECT_EQ(parseBuffered(old, buffer).second, RStep::Complete);
}

TEST(RequestReader, RefusesFoldedFieldValues) {
  boost::beast::flat_buffer buffer;
  append(buffer, "POST / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\nContent-Length: 0\r\n\r\n");
  RequestReader reader(1024, 1024);
  EXPECT_EQ(reader.parse(buffer), RStep::Failed);
  EXPECT_EQ(reader.error().kind, ErrorKind::InvalidValue);
  EXPECT_NE(reader.error().message.find("obs-fold"), std::string::npos) << reader.error().message;
}

TEST(RequestReader, ReadsTheSameRequestSentAByteAtATime) {
  const std::string request =
      "POST /v1/x HTTP/1.1\r\nHost: x\r\ntraceparent: t\r\nX-Long: " + std::string(300, 'v') +
      "\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\"q\\\"\"\r\nabc\r\n2\r\nde\r\n0\r\nX-T: "
      "1\r\n\r\n";
  boost::beast::flat_buffer buffer;
  RequestReader reader(1024, 1024);
  RStep step = RStep::NeedMore;
  for (const char c : request) {
    append(buffer, std::string_view(&c, 1));
    step = reader.parse(buffer);
    if (step == RStep::HeadDone) {
      step = reader.parse(buffer);
    }
    ASSERT_NE(step, RStep::Failed) << reader.error().message;
  }
  EXPECT_EQ(step, RStep::Complete);
  EXPECT_EQ(reader.request().target(), "/v1/x");
  EXPECT_EQ(reader.request().body().memory(), "abcde");
  const HeadFields& fields = reader.request().fields();
  ASSERT_EQ(fields.size(), 4U);  // The trailer's field is not one of the head's.
  EXPECT_EQ(fields[1].code, http1::Field::Traceparent);
  EXPECT_EQ(fields.find("x-long").size(), 300U);
  EXPECT_EQ(buffer.size(), 0U);
}

TEST(RequestReader, BoundsLinesThatNeverEnd) {
  RequestReader reader(1024, 1 << 20);
  boost::beast::flat_buffer buffer;
  append(buffer, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;");
  ASSERT_EQ(reader.parse(buffer), RStep::HeadDone);
  RStep step = reader.parse(buffer);
  while (step == RStep::NeedMore) {
    const std::size_t room = readRoom(buffer, reader.bufferLimit());
    ASSERT_GT(room, 0U);
    append(buffer, std::string(std::min<std::size_t>(room, 1000), 'a'));
    step = reader.parse(buffer);
  }
  EXPECT_EQ(step, RStep::Failed);
  EXPECT_EQ(reader.error().kind, ErrorKind::InvalidValue);
  EXPECT_LE(buffer.size(), reader.bufferLimit());
}

TEST(RequestReader, MapsLimitsToTheirStatuses) {
  boost::beast::flat_buffer big_head;
  append(big_head, "GET / HTTP/1.1\r\nHost: x\r\nX: " + std::string(2000, 'a') + "\r\n\r\n");
  RequestReader head_reader(1024, 1024);
  EXPECT_EQ(head_reader.parse(big_head), RStep::Failed);
  EXPECT_EQ(head_reader.error().status(), 431);
  boost::beast::flat_buffer big_body;
  append(big_body, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n");
  RequestReader body_reader(1024, 1024);
  EXPECT_EQ(body_reader.parse(big_body), RStep::Failed);
  EXPECT_EQ(body_reader.error().status(), 413);
}

/// Reads a whole buffered response: the body, and whether the connection could be reused.
struct Read {
  UStep last;
  std::string body;
  int status = 0;
  bool reusable = false;
};

Read readResponse(std::string_view bytes) {
  boost::beast::flat_buffer buffer;
  append(buffer, bytes);
  ResponseReader reader;
  Read r{reader.parseHead(buffer), {}};
  if (r.last != UStep::HeadDone) {
    return r;
  }
  r.status = reader.status();
  std::array<char, 5> out;
  for (;;) {
    std::size_t written = 0;
    r.last = reader.parseBody(buffer, out, written);
    r.body.append(out.data(), written);
    if (r.last != UStep::Body) {
      break;
    }
  }
  r.reusable = reader.reusable(buffer);
  return r;
}

TEST(ResponseReader, SkipsInterimAnswers) {
  const Read r = readResponse(
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n"
      "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello world");
  EXPECT_EQ(r.last, UStep::Complete);
  EXPECT_TRUE(r.reusable);
}

TEST(ResponseReader, KeepsTheFinalHeadsFieldsAndChunksTheBodyIntoTheRoomGiven) {
  boost::beast::flat_buffer buffer;
  append(buffer,
         "HTTP/1.1 103 Early Hints\r\nRetry-After: 99\r\n\r\n"
         "HTTP/1.1 429 Too Many Requests\r\ncontent-TYPE: application/json\r\n"
         "Retry-After: 7\r\nRETRY-AFTER: 8\r\nTransfer-Encoding: chunked\r\n\r\n"
         "b\r\n{\"error\":1}\r\n3\r\n   \r\n0\r\n\r\n");
  ResponseReader reader;
  ASSERT_EQ(reader.parseHead(buffer), UStep::HeadDone);
  EXPECT_EQ(reader.status(), 429);
  EXPECT_EQ(reader.contentType(), "application/json");
  EXPECT_EQ(reader.header("retry-after"), "7");  // The final answer's first, in any case.
  EXPECT_EQ(reader.header("X-Absent"), "");
  std::string body;
  std::array<char, 4> out;
  for (;;) {
    std::size_t written = 0;
    const UStep step = reader.parseBody(buffer, out, written);
    ASSERT_LE(written, out.size());
    body.append(out.data(), written);
    if (step != UStep::Body) {
      EXPECT_EQ(step, UStep::Complete);
      break;
    }
  }
  EXPECT_EQ(body, "{\"error\":1}   ");
  EXPECT_TRUE(reader.reusable(buffer));
}

TEST(ResponseReader, UnfoldsFoldedFieldValues) {
  boost::beast::flat_buffer buffer;
  append(buffer, "HTTP/1.1 200 OK\r\nX-A: a \r\n  b\r\n\t \r\n\tc\r\nContent-Length: 0\r\n\r\n");
  ResponseReader reader;
  ASSERT_EQ(reader.parseHead(buffer), UStep::HeadDone);
  EXPECT_EQ(reader.header("x-a"), "a b c");
}

TEST(ResponseReader, RefusesTooManyInterimAnswersAndProtocolSwitches) {
  std::string many;
  for (std::size_t i = 0; i <= ResponseReader::kMaxInterimResponses; ++i) {
    many += "HTTP/1.1 100 Continue\r\n\r\n";
  }
  EXPECT_EQ(readResponse(many + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").last,
            UStep::Failed);
  EXPECT_EQ(readResponse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n").last,
            UStep::Failed);
}

TEST(ResponseReader, ReusesOnlyExactlyFramedAnswers) {
  const std::string second = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nLEAKED";
  EXPECT_TRUE(readResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok").reusable);
  EXPECT_FALSE(readResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + second).reusable);
  EXPECT_FALSE(readResponse("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokX").reusable);
  EXPECT_TRUE(
      readResponse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
          .reusable);
  EXPECT_FALSE(readResponse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0"
                            "\r\n\r\n" +
                            second)
                   .reusable);
  EXPECT_FALSE(
      readResponse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok").reusable);
  // Delimited by the close: never complete before it, never reusable.
  const Read until_close = readResponse("HTTP/1.0 200 OK\r\n\r\nbody");
  EXPECT_EQ(until_close.last, UStep::NeedMore);
  EXPECT_FALSE(until_close.reusable);
}

}  // namespace
}  // namespace tollgate::net
