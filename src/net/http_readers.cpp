#include "net/http_readers.hpp"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>
#include <cstring>
#include <string>

#include "core/text.hpp"

namespace tollgate::net {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
using http1::ParseError;

/// The bytes `buffer` holds.
std::string_view bytes(const beast::flat_buffer& buffer) {
  const auto data = buffer.data();
  return {static_cast<const char*>(data.data()), data.size()};
}

/// Room for one read beyond the largest head: the buffer never needs to hold more.
constexpr std::size_t kReadAllowance = 16 * 1024;

Error malformed(std::string what) {
  return Error{ErrorKind::InvalidValue, "malformed HTTP request: " + std::move(what), ""};
}

}  // namespace

std::size_t readRoom(const beast::flat_buffer& buffer, std::size_t limit) {
  return buffer.size() >= limit ? 0 : limit - buffer.size();
}

RequestReader::RequestReader(std::size_t max_header_bytes, std::size_t max_body_bytes)
    : max_header_bytes_(max_header_bytes),
      max_body_bytes_(max_body_bytes),
      buffer_limit_(max_header_bytes + kReadAllowance) {
  parser_.headerLimit(max_header_bytes);
  parser_.bodyLimit(max_body_bytes);
  parser_.eager(false);  // Stop after the head: it is checked before the body is read.
}

Error RequestReader::tooLarge() const {
  return Error{ErrorKind::PayloadTooLarge,
               "request body exceeds " + std::to_string(max_body_bytes_) + " bytes", ""};
}

bool RequestReader::limitBody(std::size_t max_body_bytes) {
  max_body_bytes_ = max_body_bytes;
  if (const auto length = parser_.contentLength(); length && *length > max_body_bytes) {
    fail(tooLarge());
    return false;
  }
  parser_.bodyLimit(max_body_bytes);
  return true;
}

RequestReader::Step RequestReader::fail(Error e) {
  error_ = std::move(e);
  return Step::Failed;
}

RequestReader::Step RequestReader::parse(beast::flat_buffer& buffer) {
  if (error_) {
    return Step::Failed;
  }
  while (!parser_.done()) {
    ParseError ec = ParseError::None;
    const std::size_t used = parser_.put(bytes(buffer), ec);
    buffer.consume(used);
    if (ec == ParseError::HeaderLimit) {
      return fail(Error{ErrorKind::HeadersTooLarge,
                        "request headers exceed " + std::to_string(max_header_bytes_) + " bytes",
                        ""});
    }
    if (ec == ParseError::BodyLimit) {
      // Also raised with the head, when Content-Length already exceeds the limit.
      return fail(tooLarge());
    }
    if (ec == ParseError::NoSpace) {
      return fail(Error{ErrorKind::ServiceUnavailable,
                        "the gateway has no room to store the upload; try again later", ""});
    }
    if (ec != ParseError::None && ec != ParseError::NeedMore) {
      return fail(malformed(std::string(http1::describe(ec))));
    }
    if (parser_.headerDone() && !head_reported_) {
      head_reported_ = true;
      if (auto e = checkRequestFraming(parser_.fields(), parser_.version())) {
        return fail(std::move(*e));
      }
      parser_.eager(true);
      return Step::HeadDone;
    }
    if (ec == ParseError::NeedMore || used == 0) {
      if (readRoom(buffer, buffer_limit_) == 0) {
        // The head is bounded by header_limit above, so this is a chunk-size line, a chunk
        // extension or a trailer that does not end.
        return fail(malformed("a line of the chunked body is longer than " +
                              std::to_string(buffer_limit_) + " bytes"));
      }
      return Step::NeedMore;
    }
  }
  return Step::Complete;
}

std::optional<Error> checkRequestFraming(const HeadFields& fields, unsigned version) {
  // One pass over the fields, by their codes.
  std::size_t codings = 0;
  std::size_t lengths = 0;
  std::size_t hosts = 0;
  std::size_t authorizations = 0;
  std::string_view coding;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const HeadFields::Entry f = fields[i];
    switch (f.code) {
      case http1::Field::TransferEncoding:
        coding = codings++ == 0 ? f.value : coding;
        break;
      case http1::Field::ContentLength:
        ++lengths;
        break;
      case http1::Field::Host:
        ++hosts;
        break;
      case http1::Field::Authorization:
        ++authorizations;
        break;
      default:
        break;
    }
  }
  const bool http11 = version >= 11;
  if (codings > 0) {
    if (!http11) {
      return malformed("Transfer-Encoding is not allowed in an HTTP/1.0 request");
    }
    if (codings > 1 || !beast::iequals(text::trimOws(coding), "chunked")) {
      return malformed("the only Transfer-Encoding accepted is a single \"chunked\"");
    }
    if (lengths > 0) {
      return malformed("a request must not carry both Transfer-Encoding and Content-Length");
    }
  }
  if (lengths > 1) {
    return malformed("more than one Content-Length header");
  }
  if (hosts > 1) {
    return malformed("more than one Host header");
  }
  if (http11 && hosts == 0) {
    return malformed("an HTTP/1.1 request needs a Host header");
  }
  // Which key would pay is ambiguous: refused as a second Host is, not resolved by picking one.
  if (authorizations > 1) {
    return malformed("more than one Authorization header");
  }
  return std::nullopt;
}

std::size_t RequestParser::store(std::string_view body, http1::ParseError& error) {
  if (!body_.append(body)) {
    error = http1::ParseError::NoSpace;
    return 0;
  }
  return body.size();
}

std::size_t AnswerParser::store(std::string_view body, http1::ParseError& error) {
  // What does not fit stops the parser, which keeps it for later.
  const std::size_t n = std::min(room_, body.size());
  if (n > 0) {
    std::memcpy(out_, body.data(), n);
    out_ += n;
    room_ -= n;
  }
  if (n < body.size()) {
    error = http1::ParseError::NeedBuffer;
  }
  return n;
}

ResponseReader::ResponseReader() { startParser(); }

void ResponseReader::startParser() {
  parser_.emplace();
  parser_->headerLimit(kMaxHeadBytes);
  parser_->bodyLimit(std::nullopt);  // Bounded by the caller and the total timeout.
  parser_->eager(false);
}

ResponseReader::Step ResponseReader::fail(std::string what) {
  error_ = Error{ErrorKind::UpstreamError, std::move(what), ""};
  return Step::Failed;
}

ResponseReader::Step ResponseReader::parseHead(beast::flat_buffer& buffer) {
  for (;;) {
    ParseError ec = ParseError::None;
    const std::size_t used = parser_->put(bytes(buffer), ec);
    buffer.consume(used);
    if (ec != ParseError::None && ec != ParseError::NeedMore) {
      return fail("sent no valid HTTP answer: " + std::string(http1::describe(ec)));
    }
    if (!parser_->headerDone()) {
      if (readRoom(buffer, kBufferLimit) == 0) {
        return fail("sent an answer head larger than " + std::to_string(kMaxHeadBytes) + " bytes");
      }
      return Step::NeedMore;
    }
    const int s = status();
    if (s == static_cast<int>(http::status::switching_protocols)) {
      return fail("switched protocols");
    }
    if (s >= 100 && s < 200) {
      // An interim answer (100 Continue, 103 Early Hints): the final one follows (RFC 9110 §15.2).
      if (++interim_ > kMaxInterimResponses) {
        return fail("sent more than " + std::to_string(kMaxInterimResponses) +
                    " interim (1xx) answers");
      }
      startParser();
      continue;
    }
    return Step::HeadDone;
  }
}

ResponseReader::Step ResponseReader::parseBody(beast::flat_buffer& buffer, std::span<char> out,
                                               std::size_t& written) {
  written = 0;
  if (error_) {
    return Step::Failed;
  }
  if (parser_->done()) {
    return Step::Complete;
  }
  parser_->eager(true);
  parser_->bodyInto(out.data(), out.size());
  ParseError ec = ParseError::None;
  const std::size_t used = parser_->put(bytes(buffer), ec);
  buffer.consume(used);
  written = out.size() - parser_->room();
  if (ec != ParseError::None && ec != ParseError::NeedMore && ec != ParseError::NeedBuffer) {
    return fail("sent a malformed answer body: " + std::string(http1::describe(ec)));
  }
  if (written > 0) {
    return Step::Body;
  }
  if (parser_->done()) {
    return Step::Complete;
  }
  if (readRoom(buffer, kBufferLimit) == 0) {
    return fail("sent a chunk line longer than " + std::to_string(kBufferLimit) + " bytes");
  }
  return Step::NeedMore;
}

ResponseReader::Step ResponseReader::finishAtEof() {
  ParseError ec = ParseError::None;
  parser_->putEof(ec);
  if (ec != ParseError::None) {
    return fail("closed the connection before its answer was complete");
  }
  return Step::Complete;
}

std::string_view ResponseReader::contentType() const {
  return parser_->fields().find(http1::Field::ContentType);
}

std::string_view ResponseReader::header(std::string_view name) const {
  return parser_->fields().find(name);
}

bool ResponseReader::reusable(const beast::flat_buffer& buffer) const {
  return !error_ && parser_->done() && parser_->keepAlive() && buffer.size() == 0;
}

}  // namespace tollgate::net
