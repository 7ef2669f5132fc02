#include "net/http_readers.hpp"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/status.hpp>
#include <cstring>
#include <string>

#include "core/text.hpp"

namespace tollgate::net {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;

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
  parser_.header_limit(static_cast<std::uint32_t>(max_header_bytes));
  parser_.body_limit(max_body_bytes);
  parser_.eager(false);  // Stop after the head: it is checked before the body is read.
}

Error RequestReader::tooLarge() const {
  return Error{ErrorKind::PayloadTooLarge,
               "request body exceeds " + std::to_string(max_body_bytes_) + " bytes", ""};
}

bool RequestReader::limitBody(std::size_t max_body_bytes) {
  max_body_bytes_ = max_body_bytes;
  if (const auto length = parser_.content_length(); length && *length > max_body_bytes) {
    fail(tooLarge());
    return false;
  }
  parser_.body_limit(max_body_bytes);
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
  while (!parser_.is_done()) {
    beast::error_code ec;
    const std::size_t used = parser_.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::header_limit) {
      return fail(Error{ErrorKind::HeadersTooLarge,
                        "request headers exceed " + std::to_string(max_header_bytes_) + " bytes",
                        ""});
    }
    if (ec == http::error::body_limit) {
      // Also raised with the head, when Content-Length already exceeds the limit.
      return fail(tooLarge());
    }
    if (ec == boost::system::errc::no_space_on_device) {
      return fail(Error{ErrorKind::ServiceUnavailable,
                        "the gateway has no room to store the upload; try again later", ""});
    }
    if (ec && ec != http::error::need_more) {
      return fail(malformed(ec.message()));
    }
    if (parser_.is_header_done() && !head_reported_) {
      head_reported_ = true;
      if (auto e = checkRequestFraming(parser_.fields(), parser_.version())) {
        return fail(std::move(*e));
      }
      parser_.eager(true);
      return Step::HeadDone;
    }
    if (ec == http::error::need_more || used == 0) {
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
      case http::field::transfer_encoding:
        coding = codings++ == 0 ? f.value : coding;
        break;
      case http::field::content_length:
        ++lengths;
        break;
      case http::field::host:
        ++hosts;
        break;
      case http::field::authorization:
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

void HeadFields::add(http::field code, std::string_view name, std::string_view value) {
  // The head is bounded (header_limit), so every offset fits. Room for a usual head at once.
  constexpr std::size_t kUsualBytes = 512;
  if (size_ == 0) {
    text_.reserve(kUsualBytes);
  }
  const Place p{static_cast<std::uint32_t>(text_.size()), static_cast<std::uint32_t>(name.size()),
                static_cast<std::uint32_t>(value.size()), code};
  if (size_ < kInPlace) {
    in_place_[size_] = p;
  } else {
    more_.push_back(p);
  }
  ++size_;
  text_.append(name).append(value);
}

HeadFields::Entry HeadFields::operator[](std::size_t i) const {
  const Place& p = place(i);
  const std::string_view all = text_;
  return Entry{p.code, all.substr(p.at, p.name_size), all.substr(p.at + p.name_size, p.value_size)};
}

std::string_view HeadFields::find(std::string_view name) const {
  for (std::size_t i = 0; i < size(); ++i) {  // In order: the first of repeated fields.
    const Entry f = (*this)[i];
    if (beast::iequals(f.name, name)) {
      return f.value;
    }
  }
  return {};
}

std::string_view HeadFields::find(http::field code) const {
  for (std::size_t i = 0; i < size_; ++i) {
    const Place& p = place(i);
    if (p.code == code) {
      return std::string_view(text_).substr(p.at + p.name_size, p.value_size);
    }
  }
  return {};
}

std::string HeadFields::joined(std::string_view name) const {
  std::string all;
  for (std::size_t i = 0; i < size(); ++i) {
    const Entry f = (*this)[i];
    if (beast::iequals(f.name, name)) {
      all.append(all.empty() ? "" : ",").append(f.value);
    }
  }
  return all;
}

void RequestParser::on_request_impl(http::verb, string_view method, string_view target, int version,
                                    error_code& ec) {
  line_.reserve(method.size() + target.size());
  line_.assign(method.data(), method.size()).append(target.data(), target.size());
  method_size_ = method.size();
  version_ = static_cast<unsigned>(version);
  ec = {};
}

std::size_t RequestParser::store(string_view body, error_code& ec) {
  if (!body_.append(body)) {
    ec = boost::system::errc::make_error_code(boost::system::errc::no_space_on_device);
    return 0;
  }
  ec = {};
  return body.size();
}

std::size_t AnswerParser::store(string_view body, error_code& ec) {
  // As buffer_body's reader: what does not fit stops the parser, which keeps it for later.
  const std::size_t n = std::min(room_, body.size());
  if (n > 0) {
    std::memcpy(out_, body.data(), n);
    out_ += n;
    room_ -= n;
  }
  ec = n < body.size() ? http::error::need_buffer : error_code();
  return n;
}

ResponseReader::ResponseReader() { startParser(); }

void ResponseReader::startParser() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(kMaxHeadBytes));
  parser_->body_limit(boost::none);  // Bounded by the caller and the total timeout.
  parser_->eager(false);
}

ResponseReader::Step ResponseReader::fail(std::string what) {
  error_ = Error{ErrorKind::UpstreamError, std::move(what), ""};
  return Step::Failed;
}

ResponseReader::Step ResponseReader::parseHead(beast::flat_buffer& buffer) {
  for (;;) {
    beast::error_code ec;
    const std::size_t used = parser_->put(buffer.data(), ec);
    buffer.consume(used);
    if (ec && ec != http::error::need_more) {
      return fail("sent no valid HTTP answer: " + ec.message());
    }
    if (!parser_->is_header_done()) {
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
  if (parser_->is_done()) {
    return Step::Complete;
  }
  parser_->eager(true);
  parser_->bodyInto(out.data(), out.size());
  beast::error_code ec;
  const std::size_t used = parser_->put(buffer.data(), ec);
  buffer.consume(used);
  written = out.size() - parser_->room();
  if (ec && ec != http::error::need_more && ec != http::error::need_buffer) {
    return fail("sent a malformed answer body: " + ec.message());
  }
  if (written > 0) {
    return Step::Body;
  }
  if (parser_->is_done()) {
    return Step::Complete;
  }
  if (readRoom(buffer, kBufferLimit) == 0) {
    return fail("sent a chunk line longer than " + std::to_string(kBufferLimit) + " bytes");
  }
  return Step::NeedMore;
}

ResponseReader::Step ResponseReader::finishAtEof() {
  beast::error_code ec;
  parser_->put_eof(ec);
  if (ec) {
    return fail("closed the connection before its answer was complete");
  }
  return Step::Complete;
}

std::string_view ResponseReader::contentType() const {
  return parser_->fields().find(http::field::content_type);
}

std::string_view ResponseReader::header(std::string_view name) const {
  return parser_->fields().find(name);
}

bool ResponseReader::reusable(const beast::flat_buffer& buffer) const {
  return !error_ && parser_->is_done() && parser_->keep_alive() && buffer.size() == 0;
}

}  // namespace tollgate::net
