// Sans-I/O readers of HTTP/1.x messages, over Beast's parser, with the framing rules the gateway
// enforces (docs/http.md): the server's request reader and the upstream client's response
// reader. Sessions and pooled connections move bytes into a buffer; these decide what the bytes
// mean, so they can be tested and fuzzed without sockets (tests/fuzz).
#pragma once

#include <array>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/basic_parser.hpp>
#include <boost/beast/http/field.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/spool.hpp"

namespace tollgate::net {

/// How much a read may add to `buffer` without passing `limit` bytes buffered; 0 when full.
std::size_t readRoom(const boost::beast::flat_buffer& buffer, std::size_t limit);

/// The fields of a message head, every one in one buffer (Beast's fields give each its own
/// allocation in a tree of names), in the order they came.
class HeadFields {
 public:
  /// One field: Beast's code for its name (field::unknown for a name it has none for), its name
  /// as sent and its value.
  struct Entry {
    boost::beast::http::field code;
    std::string_view name;
    std::string_view value;
  };

  void add(boost::beast::http::field code, std::string_view name, std::string_view value);
  std::size_t size() const { return size_; }
  Entry operator[](std::size_t i) const;
  /// The first value of the field `name` (any case), or "".
  std::string_view find(std::string_view name) const;
  /// The first value of the field Beast names `code` (not field::unknown), or "".
  std::string_view find(boost::beast::http::field code) const;
  /// Every value of the field `name` (any case), in order, joined by commas: one list, however
  /// many lines it came in.
  std::string joined(std::string_view name) const;

 private:
  /// Where one field is in text_: its name, then its value.
  struct Place {
    std::uint32_t at;
    std::uint32_t name_size;
    std::uint32_t value_size;
    boost::beast::http::field code;
  };

  /// Room for a usual head's fields in place; more go to more_.
  static constexpr std::size_t kInPlace = 16;

  const Place& place(std::size_t i) const {
    return i < kInPlace ? in_place_[i] : more_[i - kInPlace];
  }

  std::string text_;
  std::array<Place, kInPlace> in_place_{};
  std::vector<Place> more_;
  std::size_t size_ = 0;
};

/// Beast's parser keeping a message's fields (HeadFields) and handing its body, chunked or not,
/// to `Derived::store`; the start line is the derived class's to keep.
template <bool isRequest, class Derived>
class KeepingParser : public boost::beast::http::basic_parser<isRequest> {
 public:
  const HeadFields& fields() const { return fields_; }

 protected:
  using string_view = boost::beast::string_view;
  using error_code = boost::beast::error_code;

 private:
  void on_field_impl(boost::beast::http::field code, string_view name, string_view value,
                     error_code&) override {
    fields_.add(code, name, value);
  }
  void on_header_impl(error_code& ec) override { ec = {}; }
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code& ec) override {
    ec = {};
  }
  std::size_t on_body_impl(string_view body, error_code& ec) override {
    return static_cast<Derived*>(this)->store(body, ec);
  }
  void on_chunk_header_impl(std::uint64_t, string_view, error_code& ec) override { ec = {}; }
  std::size_t on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) override {
    return static_cast<Derived*>(this)->store(body, ec);
  }
  void on_finish_impl(error_code& ec) override { ec = {}; }

  HeadFields fields_;
};

/// Beast's parser of an upstream's answer, keeping what a response_parser would, in less: the
/// status, the fields, and the body written where the caller says, as buffer_body does.
class AnswerParser final : public KeepingParser<false, AnswerParser> {
 public:
  int status() const { return status_; }
  /// Where body bytes go next, and how many fit; with no room the parser stops (need_buffer).
  void bodyInto(char* out, std::size_t room) {
    out_ = out;
    room_ = room;
  }
  std::size_t room() const { return room_; }

 private:
  friend class KeepingParser<false, AnswerParser>;

  void on_request_impl(boost::beast::http::verb, string_view, string_view, int,
                       error_code&) override {}
  void on_response_impl(int code, string_view, int, error_code&) override { status_ = code; }
  std::size_t store(string_view body, error_code& ec);

  int status_ = 0;
  char* out_ = nullptr;
  std::size_t room_ = 0;
};

/// Beast's parser of a request, keeping what the gateway reads of it: the method, the target,
/// the version, the fields and the body, in a Spool (memory up to the route's limit, a
/// temporary file past it).
class RequestParser final : public KeepingParser<true, RequestParser> {
 public:
  std::string_view method() const { return std::string_view(line_).substr(0, method_size_); }
  std::string_view target() const { return std::string_view(line_).substr(method_size_); }
  /// 10 for HTTP/1.0, 11 for HTTP/1.1.
  unsigned version() const { return version_; }
  Spool& body() { return body_; }

 private:
  friend class KeepingParser<true, RequestParser>;

  void on_request_impl(boost::beast::http::verb, string_view method, string_view target,
                       int version, error_code& ec) override;
  void on_response_impl(int, string_view, int, error_code&) override {}
  std::size_t store(string_view body, error_code& ec);

  std::string line_;  ///< The method, then the target.
  std::size_t method_size_ = 0;
  unsigned version_ = 0;
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

  bool headDone() const { return parser_.is_header_done(); }
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

/// The framing rules of RFC 9112 the gateway enforces on a request head, beyond Beast's own:
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
  bool complete() const { return parser_->is_done(); }
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
