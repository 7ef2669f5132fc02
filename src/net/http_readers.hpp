// Sans-I/O readers of HTTP/1.x messages, over our parser (http1_parser.hpp), with the framing rules
// the gateway enforces (docs/http.md): the server's request reader and the upstream client's
// response reader. Sessions and pooled connections move bytes into a buffer; these decide what the
// bytes mean, so they can be tested and fuzzed without sockets (tests/fuzz).
#pragma once

#include <boost/beast/core/flat_buffer.hpp>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/spool.hpp"
#include "net/http1_parser.hpp"

namespace tollgate::net {

/// How much a read may add to `buffer` without passing `limit` bytes buffered; 0 when full.
std::size_t readRoom(const boost::beast::flat_buffer& buffer, std::size_t limit);

/// Our parser of an upstream's answer, keeping its status, its fields, and the body written
/// where the caller says (with no room left, the parser stops: NeedBuffer).
class AnswerParser final : public http1::Parser {
 public:
  AnswerParser() : Parser(false) {}
  int status() const { return status_; }
  /// Where body bytes go next, and how many fit.
  void bodyInto(char* out, std::size_t room) {
    out_ = out;
    room_ = room;
  }
  std::size_t room() const { return room_; }

 private:
  std::size_t store(std::string_view body, http1::ParseError& error) override;

  char* out_ = nullptr;
  std::size_t room_ = 0;
};

/// Our parser of a request, keeping what the gateway reads of it: the method, the target, the
/// version, the fields and the body, in a Spool (memory up to the route's limit, a temporary
/// file past it).
class RequestParser final : public http1::Parser {
 public:
  RequestParser() : Parser(true) {}
  std::string_view method() const { return std::string_view(line_).substr(0, method_size_); }
  std::string_view target() const { return std::string_view(line_).substr(method_size_); }
  Spool& body() { return body_; }

 private:
  std::size_t store(std::string_view body, http1::ParseError& error) override;

  Spool body_;
};

/// Reads one request. The buffer the session reads into is bounded (bufferLimit()), so a
/// request line, header, chunk-size line, chunk extension or trailer that never ends fails
/// instead of growing memory.
class RequestReader {
 public:
  enum class Step {
    NeedMore,  ///< Read more bytes into the buffer, then call parse() again.
    HeadDone,  ///< The head is complete and acceptable; returned once, before the body is read.
    Complete,  ///< The whole request is read.
    Failed,    ///< See error(); answer it and close the connection.
  };

  RequestReader(std::size_t max_header_bytes, std::size_t max_body_bytes);

  /// Parses what `buffer` holds, consuming the bytes it uses; bytes of a pipelined next request
  /// stay in the buffer.
  Step parse(boost::beast::flat_buffer& buffer);

  /// Bounds the body by its route's limit, once the head is read (the limit given to the
  /// constructor bounds it before routing). False when Content-Length already exceeds it: then
  /// error() is the 413.
  bool limitBody(std::size_t max_body_bytes);

  /// The most bytes the session's buffer may hold while this request is read.
  std::size_t bufferLimit() const { return buffer_limit_; }

  bool headDone() const { return parser_.headerDone(); }
  const Error& error() const { return *error_; }
  /// The request read so far: its head once headDone(), its body once Complete.
  RequestParser& request() { return parser_; }

 private:
  Step fail(Error e);
  Error tooLarge() const;

  RequestParser parser_;
  std::size_t max_header_bytes_;
  std::size_t max_body_bytes_;
  std::size_t buffer_limit_;
  bool head_reported_ = false;
  std::optional<Error> error_;
};

/// The framing rules of RFC 9112 the gateway enforces on a request head, beyond the parser's:
/// Transfer-Encoding only as one `chunked` on HTTP/1.1 and never with Content-Length; exactly
/// one Host on HTTP/1.1 and at most one on HTTP/1.0. nullopt when the head is acceptable.
std::optional<Error> checkRequestFraming(const HeadFields& fields, unsigned version);

/// Reads one upstream response: skips interim 1xx answers, then yields the body piece by piece,
/// and says whether the connection may be reused.
class ResponseReader {
 public:
  enum class Step {
    NeedMore,  ///< Read more bytes into the buffer (or call finishAtEof() if the peer closed).
    HeadDone,  ///< The final response's head is complete (from parseHead()).
    Body,      ///< Body bytes were written (from parseBody()).
    Complete,  ///< The response is read to its end.
    Failed,    ///< See error().
  };

  /// Upstream heads are bounded by this; the connection's buffer by bufferLimit().
  static constexpr std::size_t kMaxHeadBytes = 64 * 1024;
  static constexpr std::size_t kMaxInterimResponses = 8;

  ResponseReader();

  /// Parses the head, skipping up to kMaxInterimResponses 1xx answers (101 is an error).
  Step parseHead(boost::beast::flat_buffer& buffer);

  /// Parses body bytes from `buffer` into `out`; `written` says how many (with Step::Body).
  Step parseBody(boost::beast::flat_buffer& buffer, std::span<char> out, std::size_t& written);

  /// The peer closed the connection: Complete when the body was delimited by the close.
  Step finishAtEof();

  static std::size_t bufferLimit() { return kBufferLimit; }
  int status() const { return parser_->status(); }
  std::string_view contentType() const;
  std::string_view header(std::string_view name) const;
  bool complete() const { return parser_->done(); }
  const Error& error() const { return *error_; }

  /// True only when the answer was read exactly to its end, nothing follows it in `buffer`, and
  /// the upstream allows keep-alive: otherwise the connection must be closed, never pooled.
  bool reusable(const boost::beast::flat_buffer& buffer) const;

 private:
  static constexpr std::size_t kBufferLimit = kMaxHeadBytes + 16 * 1024;
  void startParser();
  Step fail(std::string what);

  std::optional<AnswerParser> parser_;
  std::size_t interim_ = 0;
  std::optional<Error> error_;
};

}  // namespace tollgate::net
