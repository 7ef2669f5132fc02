// An HTTP/1.x message parser of our own (RFC 9112), sans-I/O: bytes in, a message's start line,
// fields and body out. It keeps the grammar and framing rules Beast's basic_parser kept (the
// readers in http_readers.hpp add the gateway's own), in one pass over a head: no call through a
// virtual table a field, no second search for the head's end, field values scanned 16 bytes at a
// time, the fields the gateway looks up given a code of their own, and the head copied once.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate::net {

namespace http1 {

/// The fields the gateway looks up by name on every request, and the framing fields: each has a
/// code, found once while the head is read; every other field is Other.
enum class Field : std::uint8_t {
  Other,
  Authorization,
  Connection,
  ContentLength,
  ContentType,
  Expect,
  Host,
  ProxyConnection,
  Traceparent,
  Tracestate,
  TransferEncoding,
};

/// The code of the field named `name`, in any case; `name` is a token (RFC 9110 §5.6.2), as the
/// parser makes sure: for other bytes the answer means nothing.
Field fieldCode(std::string_view name);

}  // namespace http1

/// The fields of a message head, in the order they came: places in one copy of the head, made
/// once it is read (a tree of names would give each field its own allocation).
class HeadFields {
 public:
  /// One field: its code, its name as sent and its value.
  struct Entry {
    http1::Field code;
    std::string_view name;
    std::string_view value;
  };

  /// A field given by its bytes (they are copied).
  void add(http1::Field code, std::string_view name, std::string_view value);
  /// For the parser: a field at these offsets of the head that keep() is given.
  void addAt(http1::Field code, std::uint32_t name_at, std::uint32_t name_size,
             std::uint32_t value_at, std::uint32_t value_size);
  /// For the parser: keeps a copy of the head the offsets of addAt() point into.
  void keep(std::string_view head) { head_.assign(head); }
  /// Forgets every field (the room stays).
  void clear();
  std::size_t size() const { return size_; }
  Entry operator[](std::size_t i) const;
  /// The first value of the field `name` (any case), or "".
  std::string_view find(std::string_view name) const;
  /// The first value of the field with the code `code` (not Other), or "".
  std::string_view find(http1::Field code) const;
  /// Every value of the field `name` (any case), in order, joined by commas: one list, however
  /// many lines it came in.
  std::string joined(std::string_view name) const;

 private:
  /// Where one field is: in head_, or in apart_ (a field given by add()).
  struct Place {
    std::uint32_t name_at;
    std::uint32_t name_size;
    std::uint32_t value_at;
    std::uint32_t value_size;
    http1::Field code;
    bool apart;
  };

  /// Room for a usual head's fields in place; more go to more_.
  static constexpr std::size_t kInPlace = 16;

  const Place& place(std::size_t i) const {
    return i < kInPlace ? in_place_[i] : more_[i - kInPlace];
  }
  void push(const Place& p);
  std::string_view value(const Place& p) const {
    return std::string_view(p.apart ? apart_ : head_).substr(p.value_at, p.value_size);
  }

  std::string head_;
  std::string apart_;
  std::array<Place, kInPlace> in_place_{};
  std::vector<Place> more_;
  std::size_t size_ = 0;
};

namespace http1 {

/// Why put() stopped: None and the two "call again" reasons, or what was wrong.
enum class ParseError : std::uint8_t {
  None,
  NeedMore,    ///< The bytes end inside the message: give it more.
  NeedBuffer,  ///< The body's taker has no room: give it room, then the same bytes again.
  HeaderLimit,
  BodyLimit,
  NoSpace,  ///< The body's taker could not keep what it took.
  BadMethod,
  BadTarget,
  BadVersion,
  BadStatus,
  BadReason,
  BadLineEnding,
  BadField,
  BadValue,
  ObsFold,
  BadContentLength,
  MultipleContentLength,
  BadTransferEncoding,
  BadChunk,
  BadChunkExtension,
  PartialMessage,
};

/// What went wrong, in a few words (for an error message).
std::string_view describe(ParseError e);

/// One message, request or response. Framing: a request has a body only by Content-Length or
/// chunked coding; a response to a 1xx, 204 or 304 has none, and one with neither header runs
/// to the connection's close. Content-Length together with chunked coding, a Content-Length
/// that is not one number (or a list of one number repeated) and two Transfer-Encoding lines
/// naming chunked are refused. Obsolete line folding is refused in a request (RFC 9112 §5.2
/// allows it) and unfolded into single spaces in a response.
class Parser {
 public:
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  /// The most bytes a head may take, its last empty line included.
  void headerLimit(std::size_t bytes) { header_limit_ = bytes; }
  /// The most body bytes (nullopt: no bound).
  void bodyLimit(std::optional<std::uint64_t> bytes) { body_limit_ = bytes; }
  /// Whether put() goes on into the body in the call that ends the head (it stops after the head
  /// otherwise, so the head can be checked first).
  void eager(bool on) { eager_ = on; }

  /// Parses what `in` holds; returns how many bytes it used (the rest is the caller's to keep
  /// and give again). `error` says why it stopped when the message is not done.
  std::size_t put(std::string_view in, ParseError& error);
  /// The peer closed: the end of a body that runs to the close; PartialMessage for anything
  /// else not yet done.
  void putEof(ParseError& error);

  bool headerDone() const { return state_ != State::Head; }
  bool done() const { return state_ == State::Complete; }
  /// Whether the connection may carry another message after this one (once headerDone()).
  bool keepAlive() const;
  std::optional<std::uint64_t> contentLength() const { return length_; }
  /// 10 for HTTP/1.0, 11 for HTTP/1.1.
  unsigned version() const { return version_; }
  const HeadFields& fields() const { return fields_; }

 protected:
  explicit Parser(bool request) : request_(request) {}
  ~Parser() = default;

  /// Takes body bytes, returns how many it took: fewer than given with NeedBuffer (no room) or
  /// NoSpace in `error` stop the parser.
  virtual std::size_t store(std::string_view body, ParseError& error) = 0;

  /// A request's method, then its target; empty for a response.
  std::string line_;
  std::size_t method_size_ = 0;
  int status_ = 0;

 private:
  enum class State : std::uint8_t { Head, Body, ToEof, ChunkHeader, ChunkBody, Trailer, Complete };

  ParseError head(const char* p, const char* end, std::size_t& used);
  ParseError requestLine(const char*& p, const char* end);
  ParseError statusLine(const char*& p, const char* end);
  ParseError field(const char* begin, const char*& p, const char* end, bool trailer);
  ParseError framing(Field code, std::string_view value);
  ParseError endHead();
  ParseError body(const char*& p, const char* end);
  ParseError chunkHeader(const char*& p, const char* end);
  ParseError trailer(const char*& p, const char* end);
  /// Counts `size` body bytes against the body limit.
  bool spend(std::uint64_t size);

  bool request_;
  State state_ = State::Head;
  bool eager_ = true;
  bool chunked_ = false;
  bool close_ = false;
  bool keep_alive_ = false;
  bool to_eof_ = false;    ///< A response's body runs to the connection's close.
  bool crlf_due_ = false;  ///< A chunk's data was read; its CRLF is not yet.
  unsigned version_ = 0;
  std::size_t header_limit_ = 8192;
  std::optional<std::uint64_t> body_limit_;
  std::optional<std::uint64_t> length_;
  std::uint64_t remaining_ = 0;  ///< Body bytes left of the Content-Length or the chunk.
  /// Bytes of a line or head known to hold no end yet: searched again only past them.
  std::size_t scanned_ = 0;
  HeadFields fields_;
};

}  // namespace http1
}  // namespace tollgate::net
