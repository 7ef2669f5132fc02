// Differential: the gateway's HTTP readers (net/http_readers) against Boost.Beast's own parsers
// (request_parser over string_body; response_parser over the same body without its up-front
// reservation of Content-Length bytes) on the same bytes. The first input byte chooses the mode
// (bit 0: a client's request or an upstream's answer) and how many bytes arrive per read on our
// side; Beast is given the whole input at once. Requests: the first request of the input, ours
// bounded as in fuzz_http_request (1 KiB head, 4 KiB body), Beast's head put through
// checkRequestFraming; both must complete, fail with the same error (431 for the head's size, 413
// for the body's, 400 for anything else) or wait for more, agree on the head's fields (names as
// sent, values, order, codes), and a complete request must have the same method, target,
// version, keep-alive and body and end at the same byte. Answers: up to 8 interim 1xx answers
// skipped (101 fails), the end of input taken as the peer closing; the outcome, whether the final
// head was read, its status and the first value of each of its fields, the body, where the answer
// ends and whether the connection is reusable must match. Tolerated, each where it is checked
// below and only as far as said there: Beast's fields object lists a repeated name right after
// its previous occurrence; Beast's verdict on a head past the limit depends on how the head is
// split; a fault Beast finds in a head or a chunk line, ours may find later (waiting) or sooner;
// our buffer bound ends a chunk line Beast would wait on; what the gateway refuses and Beast
// takes (obs-fold in requests, a Transfer-Encoding that is not a list of tokens, a quoted chunk
// extension with a control byte or no end on its line), and Beast's 4 KiB bound on a folded
// value.
#include <array>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "fuzz_check.hpp"
#include "net/http_readers.hpp"

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using tollgate::ErrorKind;
using tollgate::fuzz::check;
using tollgate::net::RequestReader;
using tollgate::net::ResponseReader;

constexpr std::size_t kMaxHeader = 1024;
constexpr std::size_t kMaxBody = 4096;

enum class Outcome { Complete, Failed, Incomplete };

/// The code HeadFields gives a field: Beast's own, or since our parser of its own, a code for
/// each field the gateway reads (http1::Field).
using FieldCode = decltype(tollgate::net::HeadFields::Entry::code);

/// The code HeadFields should give the field Beast names `code` (`name` as sent).
template <class Code>
Code codeOf(http::field code, std::string_view name) {
  if constexpr (std::is_same_v<Code, http::field>) {
    return code;
  } else {
    switch (code) {
      case http::field::authorization:
        return Code::Authorization;
      case http::field::connection:
        return Code::Connection;
      case http::field::content_length:
        return Code::ContentLength;
      case http::field::content_type:
        return Code::ContentType;
      case http::field::expect:
        return Code::Expect;
      case http::field::host:
        return Code::Host;
      case http::field::proxy_connection:
        return Code::ProxyConnection;
      case http::field::transfer_encoding:
        return Code::TransferEncoding;
      default:
        break;
    }
    // Beast has no code for these two (W3C Trace Context).
    if (beast::iequals(name, "traceparent")) {
      return Code::Traceparent;
    }
    if (beast::iequals(name, "tracestate")) {
      return Code::Tracestate;
    }
    return Code::Other;
  }
}

struct Field {
  FieldCode code;
  std::string name;
  std::string value;
  bool operator==(const Field&) const = default;
};

/// Fields in the order they came, listed as Beast's fields object lists them: a name seen before
/// goes right after the last field of that name (any case), not at the end.
std::vector<Field> groupedAsBeast(const tollgate::net::HeadFields& fields) {
  std::vector<Field> out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const tollgate::net::HeadFields::Entry f = fields[i];
    std::size_t at = out.size();
    for (std::size_t j = out.size(); j-- > 0;) {
      if (beast::iequals(out[j].name, f.name)) {
        at = j + 1;
        break;
      }
    }
    out.insert(out.begin() + static_cast<std::ptrdiff_t>(at),
               Field{f.code, std::string(f.name), std::string(f.value)});
  }
  return out;
}

template <class Fields>
std::vector<Field> fieldsOf(const Fields& fields) {
  std::vector<Field> out;
  for (const auto& f : fields) {
    out.push_back(Field{codeOf<FieldCode>(f.name(), f.name_string()), std::string(f.name_string()),
                        std::string(f.value())});
  }
  return out;
}

/// The first value of `name` (any case) among `fields`, or "".
std::string_view firstValue(const std::vector<Field>& fields, std::string_view name) {
  for (const Field& f : fields) {
    if (beast::iequals(f.name, name)) {
      return f.value;
    }
  }
  return {};
}

/// Whether the head starting at `at` in `input` is too large: more than `limit` bytes, its empty
/// line included, or at least `limit` bytes with no end.
bool headOversized(std::string_view input, std::size_t at, std::size_t limit) {
  const std::size_t end = input.find("\r\n\r\n", at);
  return end == std::string_view::npos ? input.size() - at >= limit : end + 4 - at > limit;
}

/// Whether the lines of `input` from `at` to the first empty line (or the end) fold a field value
/// over lines: a line that starts with a space or tab (obs-fold). `at` is the start of a head, or
/// the CRLF that ends the last chunk's line, before the trailers.
bool foldsFrom(std::string_view input, std::size_t at) {
  const std::size_t end = input.find("\r\n\r\n", at);
  const std::string_view lines =
      input.substr(at, end == std::string_view::npos ? end : end + 2 - at);
  return lines.find("\r\n ") != std::string_view::npos ||
         lines.find("\r\n\t") != std::string_view::npos;
}

/// Whether a Transfer-Encoding field of the head starting at `at` in `input` is not a list of
/// tokens (RFC 9110 §5.6.1 and §5.6.2; empty elements allowed). Beast takes such a list up to
/// its first byte that is not a token's, so "chunked x" is chunked and "x\xff, chunked" is not;
/// the gateway refuses it (docs/http.md), since its own parser does.
bool transferCodingsMalformed(std::string_view input, std::size_t at) {
  const std::size_t end = input.find("\r\n\r\n", at);
  std::string head(input.substr(at, end == std::string_view::npos ? end : end + 2 - at));
  for (std::size_t i = 0; (i = head.find("\r\n", i)) != std::string::npos;) {
    if (i + 2 < head.size() && (head[i + 2] == ' ' || head[i + 2] == '\t')) {
      head.replace(i, 2, " ");  // Unfolded.
    } else {
      i += 2;
    }
  }
  const auto tchar = [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  };
  constexpr std::string_view kName = "transfer-encoding:";
  for (std::size_t line = 0; line < head.size();) {
    std::size_t line_end = head.find("\r\n", line);
    line_end = line_end == std::string::npos ? head.size() : line_end;
    const std::string_view text(head.data() + line, line_end - line);
    if (text.size() >= kName.size() && beast::iequals(text.substr(0, kName.size()), kName)) {
      for (char c : text.substr(kName.size())) {
        if (c != ',' && c != ' ' && c != '\t' && !tchar(c)) {
          return true;
        }
      }
      // Tokens apart, an element is one token: white space only at its edges.
      std::string_view value = text.substr(kName.size());
      while (!value.empty()) {
        std::size_t comma = value.find(',');
        std::string_view element = value.substr(0, comma);
        const std::size_t first = element.find_first_not_of(" \t");
        const std::size_t last = element.find_last_not_of(" \t");
        if (first != std::string_view::npos &&
            element.substr(first, last + 1 - first).find_first_of(" \t") !=
                std::string_view::npos) {
          return true;
        }
        value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
      }
    }
    line = line_end + 2;
  }
  return false;
}

/// Whether the chunk line at the start of `rest` (after the CRLF that ends a chunk's data, if
/// any) has a quoted string that RFC 9112's grammar refuses but Beast's parser of chunk
/// extensions takes: one with a control byte in it (Beast takes any byte up to the next '"'), or
/// one not closed on the line (Beast reads on past the line's end into the chunk's data).
bool chunkLineQuoteIrregular(std::string_view rest) {
  if (rest.starts_with("\r\n")) {
    rest.remove_prefix(2);
  }
  rest = rest.substr(0, rest.find("\r\n"));
  const auto control = [](char c) { return (c >= 0 && c < ' ' && c != '\t') || c == 0x7f; };
  bool quoted = false;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '"') {
      quoted = !quoted;
    } else if (quoted && rest[i] == '\\' && i + 1 < rest.size()) {
      ++i;
      if (control(rest[i])) {
        return true;
      }
    } else if (quoted && control(rest[i])) {
      return true;
    }
  }
  return quoted;
}

/// The input as a reader is given it: `piece` bytes at a time into a buffer of at most `limit`
/// bytes.
struct Feed {
  Feed(std::string_view bytes, std::size_t per_read, std::size_t bound)
      : input(bytes), piece(per_read), limit(bound) {}

  std::string_view input;
  std::size_t piece;
  std::size_t limit;
  std::size_t pos = 0;
  beast::flat_buffer buffer;

  bool exhausted() const { return pos == input.size(); }
  /// Input bytes not consumed yet, buffered or not.
  std::size_t left() const { return buffer.size() + (input.size() - pos); }
  std::size_t consumed() const { return pos - buffer.size(); }
  void more() {
    const std::size_t room = tollgate::net::readRoom(buffer, limit);
    check(room > 0);  // A full buffer must have made the reader fail.
    const std::size_t n = std::min({piece, room, input.size() - pos});
    boost::asio::buffer_copy(buffer.prepare(n), boost::asio::buffer(input.data() + pos, n));
    buffer.commit(n);
    pos += n;
  }
};

/// Feeds an eager Beast parser until it is done, fails, or waits at the end of input.
template <class Parser>
beast::error_code putAll(Parser& parser, Feed& feed) {
  while (!parser.is_done()) {
    beast::error_code ec;
    const std::size_t used = parser.put(feed.buffer.data(), ec);
    feed.buffer.consume(used);
    if (ec && ec != http::error::need_more) {
      return ec;
    }
    if (ec == http::error::need_more || used == 0) {
      if (feed.exhausted()) {
        break;
      }
      feed.more();
    }
  }
  return {};
}

/// The head's fields of a Beast parser, trailers left out: a chunked body's trailers are inserted
/// among them, so they are taken when the last chunk's header is read, before its trailers; and
/// where in the input that last chunk's line ends.
template <class Parser>
class HeadSnapshot {
 public:
  HeadSnapshot(Parser& parser, const Feed& feed) : parser_(parser), feed_(feed) {
    parser.on_chunk_header(callback_);
  }
  std::vector<Field> fields() const { return head_ ? *head_ : fieldsOf(parser_.get()); }
  /// The input offset of the CRLF that ends the last chunk's line, once it was read.
  std::optional<std::size_t> lastChunkEnd() const { return last_chunk_end_; }

 private:
  Parser& parser_;
  const Feed& feed_;
  std::optional<std::vector<Field>> head_;
  std::optional<std::size_t> last_chunk_end_;
  std::function<void(std::uint64_t, beast::string_view, beast::error_code&)> callback_ =
      [this](std::uint64_t size, beast::string_view extensions, beast::error_code&) {
        if (size == 0) {
          head_ = fieldsOf(parser_.get());
          // The extensions lie in the buffer being parsed, up to the line's CRLF.
          const auto* base = static_cast<const char*>(feed_.buffer.data().data());
          last_chunk_end_ = feed_.consumed() +
                            static_cast<std::size_t>(extensions.data() + extensions.size() - base);
        }
      };
};

// ---- Requests ----

/// What a side made of the first request of the input.
struct RequestSeen {
  Outcome outcome = Outcome::Incomplete;
  ErrorKind kind = ErrorKind::InvalidValue;  ///< When Failed.
  std::size_t left = 0;                      ///< Input bytes not consumed.
  std::size_t given = 0;                     ///< Input bytes given to the parser.
  bool buffer_full = false;                  ///< Ours' buffer was at its bound when it failed.
  std::size_t buffer_limit = 0;              ///< Ours' bound.
  bool head_done = false;
  std::vector<Field> head;  ///< As Beast lists them, once head_done.
  std::string method;       ///< The rest once Complete.
  std::string target;
  unsigned version = 0;
  bool keep_alive = false;
  std::string body;
  std::optional<std::size_t> last_chunk_end;  ///< Beast's only: see HeadSnapshot.
};

ErrorKind requestErrorKind(const beast::error_code& ec) {
  if (ec == http::error::header_limit) {
    return ErrorKind::HeadersTooLarge;
  }
  if (ec == http::error::body_limit) {
    return ErrorKind::PayloadTooLarge;
  }
  return ErrorKind::InvalidValue;
}

/// Beast, given `piece` bytes at a time (the whole input at once unless told).
RequestSeen beastRequest(std::string_view input, std::size_t piece) {
  using Parser = http::request_parser<http::string_body>;
  RequestSeen seen;
  Parser parser;
  parser.header_limit(kMaxHeader);
  parser.body_limit(kMaxBody);
  parser.eager(true);
  Feed feed{input, piece, SIZE_MAX};
  HeadSnapshot<Parser> head(parser, feed);
  const beast::error_code ec = putAll(parser, feed);
  seen.last_chunk_end = head.lastChunkEnd();
  seen.left = feed.left();
  seen.given = feed.pos;
  seen.head_done = parser.is_header_done();
  if (seen.head_done) {
    seen.head = head.fields();
    // The gateway's framing rules come first: they are checked before any body byte is read.
    tollgate::net::HeadFields fields;
    for (const Field& f : seen.head) {
      fields.add(f.code, f.name, f.value);
    }
    if (tollgate::net::checkRequestFraming(fields, parser.get().version())) {
      seen.outcome = Outcome::Failed;
      return seen;
    }
  }
  if (ec) {
    seen.outcome = Outcome::Failed;
    seen.kind = requestErrorKind(ec);
    return seen;
  }
  if (!parser.is_done()) {
    return seen;
  }
  seen.outcome = Outcome::Complete;
  const auto& m = parser.get();
  seen.method = std::string(m.method_string());
  seen.target = std::string(m.target());
  seen.version = m.version();
  seen.keep_alive = parser.keep_alive();
  seen.body = m.body();
  return seen;
}

/// The parser's keep-alive verdict, however the request's parser spells it (Beast's keep_alive()
/// or our own parser's keepAlive()).
template <class RequestParser>
bool keepAlive(const RequestParser& r) {
  if constexpr (requires { r.keep_alive(); }) {
    return r.keep_alive();
  } else {
    return r.keepAlive();
  }
}

std::string spoolBytes(tollgate::Spool& spool) {
  if (!spool.inFile()) {
    return spool.memory();
  }
  std::string all(spool.size(), '\0');
  const auto n = spool.read(0, std::span<char>(all.data(), all.size()));
  check(n.ok() && *n == all.size());
  return all;
}

/// Ours, as a session feeds it.
RequestSeen ourRequest(std::string_view input, std::size_t piece) {
  RequestSeen seen;
  RequestReader reader(kMaxHeader, kMaxBody);
  seen.buffer_limit = reader.bufferLimit();
  Feed feed{input, piece, reader.bufferLimit()};
  bool head_taken = false;
  for (;;) {
    const RequestReader::Step step = reader.parse(feed.buffer);
    if (reader.headDone() && !head_taken) {
      // At HeadDone, or at a failure of the framing rules: before any trailer.
      head_taken = true;
      seen.head = groupedAsBeast(reader.request().fields());
    }
    if (step == RequestReader::Step::HeadDone) {
      continue;
    }
    seen.head_done = reader.headDone();
    if (step == RequestReader::Step::Failed) {
      seen.outcome = Outcome::Failed;
      seen.kind = reader.error().kind;
      seen.buffer_full = tollgate::net::readRoom(feed.buffer, reader.bufferLimit()) == 0;
      break;
    }
    if (step == RequestReader::Step::Complete) {
      seen.outcome = Outcome::Complete;
      tollgate::net::RequestParser& r = reader.request();
      seen.method = std::string(r.method());
      seen.target = std::string(r.target());
      seen.version = r.version();
      seen.keep_alive = keepAlive(r);
      seen.body = spoolBytes(r.body());
      break;
    }
    check(feed.buffer.size() <= reader.bufferLimit());
    if (feed.exhausted()) {
      break;  // Incomplete: the client stopped sending.
    }
    feed.more();
  }
  seen.left = feed.left();
  seen.given = feed.pos;
  return seen;
}

/// The same verdict: outcome, error, the head, and all a complete request has. (A refused
/// request is a 400 however far it was read: whether its head was done is not compared then.)
void checkSame(const RequestSeen& ours, const RequestSeen& theirs) {
  check(ours.outcome == theirs.outcome);
  if (ours.outcome == Outcome::Failed) {
    check(ours.kind == theirs.kind);
    return;
  }
  check(ours.head_done == theirs.head_done);
  if (ours.head_done) {
    check(ours.head == theirs.head);
  }
  if (ours.outcome == Outcome::Complete) {
    check(ours.left == theirs.left);
    check(ours.method == theirs.method);
    check(ours.target == theirs.target);
    check(ours.version == theirs.version);
    check(ours.keep_alive == theirs.keep_alive);
    check(ours.body == theirs.body);
  }
}

void compareRequests(std::string_view input, std::size_t piece) {
  const RequestSeen ours = ourRequest(input, piece);
  const RequestSeen theirs = beastRequest(input, input.size());
  const auto failed = [](const RequestSeen& seen, ErrorKind kind) {
    return seen.outcome == Outcome::Failed && seen.kind == kind;
  };
  if (failed(ours, ErrorKind::InvalidValue) && ours.buffer_full && ours.head_done &&
      theirs.outcome != Outcome::Failed) {
    // Ours stops at its buffer bound where Beast, with no bound of its own on a chunk line,
    // waits: acceptable when Beast, given the bytes ours had, also waited with at least the
    // bound unparsed.
    const RequestSeen prefix = beastRequest(input.substr(0, ours.given), ours.given);
    check(prefix.outcome == Outcome::Incomplete && prefix.left >= ours.buffer_limit);
    return;
  }
  if (failed(ours, ErrorKind::InvalidValue) &&
      (foldsFrom(input, 0) ||
       (theirs.last_chunk_end && foldsFrom(input, *theirs.last_chunk_end)))) {
    // Beast unfolds a folded field value, in the head or the trailers (each fold one space); the
    // gateway may refuse it instead (docs/http.md, RFC 9112 §5.2), and since its own parser does.
    return;
  }
  if (failed(ours, ErrorKind::InvalidValue) && transferCodingsMalformed(input, 0)) {
    return;  // Beast reads such a Transfer-Encoding its own way; the gateway may refuse it.
  }
  if (headOversized(input, 0, kMaxHeader)) {
    // A head past the limit. Beast's header_limit bounds what it holds unparsed, not the head:
    // given the head whole, it bounds the request line and the field block each by the limit
    // (and reports a fault within the first limit bytes before the size); fed in pieces, fields
    // it parsed in a first look no longer count. Ours may refuse it (431, or 400 for a fault)
    // whatever Beast said, or else must do as Beast fed in ours' pieces.
    if (failed(ours, ErrorKind::HeadersTooLarge) || failed(ours, ErrorKind::InvalidValue)) {
      return;
    }
    checkSame(ours, beastRequest(input, piece));
    return;
  }
  if (failed(theirs, ErrorKind::InvalidValue) && !theirs.head_done &&
      (ours.outcome == Outcome::Incomplete ||
       (failed(ours, ErrorKind::HeadersTooLarge) && input.size() >= kMaxHeader))) {
    // A fault in the head that Beast given it whole finds, where ours waits for more, or waits
    // until the limit: no bytes after could make the head good. A parser may look at a head
    // again only once its end (CRLF CRLF) is there: Beast fed in pieces does that after a first
    // look found the head incomplete (so "G / 3\r\n\r\n", whose version alone wants 8 bytes,
    // waits for a second empty line), ours since its own parser too.
    return;
  }
  if (ours.head_done && theirs.head_done && ours.outcome != Outcome::Complete &&
      ((theirs.outcome != Outcome::Complete &&
        chunkLineQuoteIrregular(input.substr(input.size() - theirs.left))) ||
       chunkLineQuoteIrregular(input.substr(input.size() - ours.left)))) {
    // A chunk extension's quoted string, where ours or Beast stopped, that is not closed on its
    // line or holds a control byte. Beast takes any byte up to the closing '"', reading on into
    // the chunk's data if it must, so it accepts, waits, or fails with bad_chunk_extension when a
    // '"' comes past the line's end; fed in pieces it also charges the chunk's size to the body
    // limit again at every try, so fails with body_limit after enough pieces. Ours may refuse it
    // (400, or that 413) or wait, as long as the head agrees.
    check(ours.head == theirs.head);
    check(ours.outcome == Outcome::Incomplete || ours.kind == ErrorKind::InvalidValue ||
          ours.kind == ErrorKind::PayloadTooLarge);
    return;
  }
  if (failed(ours, ErrorKind::InvalidValue) && ours.head_done &&
      theirs.outcome == Outcome::Incomplete && theirs.head_done && theirs.left > 0) {
    // A fault in a chunk line or the trailers that Beast has not parsed yet: it waits for the
    // line's end, and for the last chunk for the end of the trailers, before it looks. Ours may
    // refuse it at once if Beast, given the ends (CRLF CRLF), refuses it too.
    check(ours.head == theirs.head);
    const std::string ended = std::string(input) + "\r\n\r\n";
    check(beastRequest(ended, ended.size()).outcome == Outcome::Failed);
    return;
  }
  if (ours.outcome == Outcome::Failed && theirs.outcome == Outcome::Failed && ours.head_done &&
      theirs.head_done && ours.kind != theirs.kind &&
      (ours.kind == ErrorKind::InvalidValue || ours.kind == ErrorKind::PayloadTooLarge) &&
      (theirs.kind == ErrorKind::InvalidValue || theirs.kind == ErrorKind::PayloadTooLarge)) {
    // A chunk line both too large for the body limit and malformed: Beast charges its size
    // before it parses the extensions, a parser may do the other first. 413 or 400, a refusal.
    check(ours.head == theirs.head);
    return;
  }
  checkSame(ours, theirs);
}

// ---- Answers ----

/// string_body without its reader's reservation of Content-Length bytes up front, which with no
/// body limit (ours has none) would be an allocation of whatever size an answer names.
struct UnreservedBody : http::string_body {
  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>&, value_type& body) : body_(body) {}
    void init(const boost::optional<std::uint64_t>&, beast::error_code& ec) { ec = {}; }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, beast::error_code& ec) {
      std::size_t n = 0;
      for (const auto b : beast::buffers_range_ref(buffers)) {
        body_.append(static_cast<const char*>(b.data()), b.size());
        n += b.size();
      }
      ec = {};
      return n;
    }
    void finish(beast::error_code& ec) { ec = {}; }

   private:
    value_type& body_;
  };
};

/// What a side made of the upstream's answer.
struct ResponseSeen {
  Outcome outcome = Outcome::Incomplete;
  std::size_t left = 0;      ///< Input bytes not consumed.
  std::size_t given = 0;     ///< Input bytes given to the parser.
  bool buffer_full = false;  ///< Ours' buffer was at its bound when it failed.
  bool head_done = false;    ///< The final answer's head.
  int status = 0;
  std::vector<Field> head;  ///< Beast's only: ours has no list of its fields.
  std::string body;
  bool keep_alive = false;      ///< Beast's only, when Complete.
  bool reusable = false;        ///< Ours only: reusable(buffer), when Complete.
  std::size_t buffered = 0;     ///< Ours only: bytes left in its buffer, when Complete.
  bool head_oversized = false;  ///< Beast's only: a head it read (interim ones too) was too large.
  /// Beast's only: a head it read (interim ones too) had a Transfer-Encoding that is not a list
  /// of tokens.
  bool codings_malformed = false;
  /// Beast's only, when Failed: whether with header_limit, where the head it stopped in began,
  /// and where its last chunk's line ended (see HeadSnapshot).
  bool header_limit = false;
  std::size_t head_at = 0;
  std::optional<std::size_t> last_chunk_end;
};

/// Beast, given `piece` bytes at a time: interim answers skipped as ResponseReader does, each
/// with a parser of its own; at the end of input (`at_eof`) a final answer whose head was read
/// is told the peer closed.
ResponseSeen beastResponse(std::string_view input, std::size_t piece, bool at_eof) {
  using Parser = http::response_parser<UnreservedBody>;
  ResponseSeen seen;
  Feed feed{input, piece, SIZE_MAX};
  std::size_t interim = 0;
  for (;;) {
    Parser parser;
    parser.header_limit(static_cast<std::uint32_t>(ResponseReader::kMaxHeadBytes));
    parser.body_limit(boost::none);
    parser.eager(true);
    HeadSnapshot<Parser> head(parser, feed);
    seen.head_at = feed.consumed();
    seen.codings_malformed =
        seen.codings_malformed || transferCodingsMalformed(input, feed.consumed());
    seen.head_oversized =
        seen.head_oversized || headOversized(input, feed.consumed(), ResponseReader::kMaxHeadBytes);
    beast::error_code ec = putAll(parser, feed);
    seen.last_chunk_end = head.lastChunkEnd();
    seen.left = feed.left();
    seen.given = feed.pos;
    if (ec) {
      // A final answer whose body failed had its head read; an interim one has no body.
      seen.outcome = Outcome::Failed;
      seen.header_limit = ec == http::error::header_limit;
      if (parser.is_header_done()) {
        seen.status = parser.get().result_int();
        seen.head_done = seen.status < 100 || seen.status >= 200;
        seen.head = head.fields();
      }
      return seen;
    }
    if (!parser.is_header_done()) {
      return seen;  // Incomplete.
    }
    const int status = parser.get().result_int();
    if (status == 101) {
      seen.outcome = Outcome::Failed;
      return seen;
    }
    if (status >= 100 && status < 200) {
      if (++interim > ResponseReader::kMaxInterimResponses) {
        seen.outcome = Outcome::Failed;
        return seen;
      }
      continue;
    }
    seen.head_done = true;
    seen.status = status;
    seen.head = head.fields();
    if (!parser.is_done()) {
      if (!at_eof) {
        return seen;  // Incomplete.
      }
      parser.put_eof(ec);
      if (ec) {
        seen.outcome = Outcome::Failed;
        return seen;
      }
    }
    seen.outcome = Outcome::Complete;
    seen.body = parser.get().body();
    seen.keep_alive = parser.keep_alive();
    return seen;
  }
}

/// Field names a head may lack, looked up in ours when Beast's head has none of them.
constexpr std::array<std::string_view, 8> kAbsentNames{
    "Content-Length", "Transfer-Encoding", "Connection", "Content-Type",
    "Retry-After",    "Location",          "Upgrade",    "X-Fuzz"};

/// Ours, as a pooled connection feeds it; its final head is compared with `theirs` as it comes
/// (when Beast read that head too).
ResponseSeen ourResponse(std::string_view input, std::size_t piece, const ResponseSeen& theirs) {
  using Step = ResponseReader::Step;
  ResponseSeen seen;
  ResponseReader reader;
  Feed feed{input, piece, ResponseReader::bufferLimit()};
  std::array<char, 37> out;  // Small on purpose: bodies come out in many pieces.
  for (;;) {
    Step step = Step::NeedMore;
    if (!seen.head_done) {
      step = reader.parseHead(feed.buffer);
      if (step == Step::HeadDone) {
        seen.head_done = true;
        seen.status = reader.status();
        if (theirs.head_done) {
          // Ours lists no fields: each of Beast's names must find its first value.
          for (const Field& f : theirs.head) {
            check(reader.header(f.name) == firstValue(theirs.head, f.name));
          }
          for (const std::string_view name : kAbsentNames) {
            check(reader.header(name) == firstValue(theirs.head, name));
          }
          check(reader.contentType() == firstValue(theirs.head, "Content-Type"));
        }
        continue;
      }
    } else {
      std::size_t written = 0;
      step = reader.parseBody(feed.buffer, out, written);
      check(written <= out.size());
      seen.body.append(out.data(), written);
      if (step == Step::Body) {
        continue;
      }
    }
    if (step == Step::NeedMore) {
      check(feed.buffer.size() <= ResponseReader::bufferLimit());
      if (!feed.exhausted()) {
        feed.more();
        continue;
      }
      if (!seen.head_done) {
        break;  // Incomplete: finishAtEof() is for a body delimited by the close.
      }
      step = reader.finishAtEof();
    }
    if (step == Step::Failed) {
      seen.outcome = Outcome::Failed;
      seen.buffer_full = tollgate::net::readRoom(feed.buffer, ResponseReader::bufferLimit()) == 0;
      break;
    }
    check(step == Step::Complete);
    seen.outcome = Outcome::Complete;
    seen.reusable = reader.reusable(feed.buffer);
    seen.buffered = feed.buffer.size();
    break;
  }
  seen.left = feed.left();
  seen.given = feed.pos;
  return seen;
}

void compareResponses(std::string_view input, std::size_t piece) {
  const ResponseSeen theirs = beastResponse(input, input.size(), true);
  const ResponseSeen ours = ourResponse(input, piece, theirs);
  if (ours.outcome == Outcome::Failed && ours.buffer_full && ours.head_done &&
      theirs.outcome != Outcome::Failed) {
    // As for requests: Beast, given the bytes ours had, must also have waited, with at least the
    // bound unparsed.
    const ResponseSeen prefix = beastResponse(input.substr(0, ours.given), ours.given, false);
    check(prefix.outcome == Outcome::Incomplete && prefix.left >= ResponseReader::bufferLimit());
    return;
  }
  if (ours.outcome == Outcome::Failed && theirs.head_oversized) {
    return;  // As for requests: a head past the limit may be refused.
  }
  if (ours.outcome == Outcome::Failed && ours.head_done && theirs.head_done &&
      ((theirs.outcome != Outcome::Complete &&
        chunkLineQuoteIrregular(input.substr(input.size() - theirs.left))) ||
       chunkLineQuoteIrregular(input.substr(input.size() - ours.left)))) {
    check(ours.status == theirs.status);
    return;  // As for requests: a chunk extension's quoted string Beast takes and ours need not.
  }
  if (ours.outcome == Outcome::Failed && theirs.codings_malformed) {
    return;  // As for requests: a Transfer-Encoding that is not a list of tokens may be refused.
  }
  if (theirs.header_limit && !theirs.head_oversized &&
      (foldsFrom(input, theirs.head_at) ||
       (theirs.last_chunk_end && foldsFrom(input, *theirs.last_chunk_end)))) {
    // Beast unfolds a folded value into a buffer of 4 KiB (max_obs_fold) and fails with
    // header_limit past it, however small the head; ours unfolds within its head limit.
    return;
  }
  if (ours.outcome == Outcome::Incomplete && theirs.outcome == Outcome::Failed &&
      !theirs.head_done) {
    return;  // As for requests: a fault in a head that Beast finds where ours waits.
  }
  const ResponseSeen* reference = &theirs;
  std::optional<ResponseSeen> in_pieces;
  if (theirs.head_oversized) {
    // As for requests: a head past the limit that ours did not refuse is judged by Beast fed in
    // ours' pieces.
    in_pieces = beastResponse(input, piece, true);
    reference = &*in_pieces;
  }
  check(ours.outcome == reference->outcome);
  check(ours.head_done == reference->head_done);
  if (ours.head_done) {
    check(ours.status == reference->status);
  }
  if (ours.outcome == Outcome::Complete) {
    check(ours.left == reference->left);
    check(ours.body == reference->body);
    // Reusable: Beast's keep-alive with nothing left in the buffer; and only with nothing left
    // of the input.
    check(ours.reusable == (reference->keep_alive && ours.buffered == 0));
    check((ours.reusable && ours.left == 0) == (reference->keep_alive && reference->left == 0));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) {
    return 0;
  }
  // Bit 0: the mode; the other bits: bytes per read, 1 to 379, or everything at once.
  const unsigned k = data[0] >> 1;
  const std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::size_t piece = k == 127 ? input.size() + 1 : 1 + 3 * k;
  if (data[0] & 1) {
    compareResponses(input, piece);
  } else {
    compareRequests(input, piece);
  }
  return 0;
}
