#include "http/response.hpp"

#include <array>
#include <charconv>
#include <string_view>

namespace tollgate::http {
namespace {

constexpr std::size_t kHeadReserve = 192;
constexpr std::size_t kNumberBytes = 24;  ///< A std::size_t in decimal, with room to spare.

}  // namespace

Response Response::json(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::eventStream() {
  Response head;
  head.content_type = "text/event-stream";
  head.header("Cache-Control", "no-cache").header("X-Accel-Buffering", "no");
  return head;
}

Response Response::error(const Error& e) {
  Response r = json(e.status(), errorBody(e));
  if (r.status == 401) {
    r.header("WWW-Authenticate", "Bearer realm=\"tollgate\"");  // RFC 6750 §3
  }
  if (e.kind == ErrorKind::GatewayFenced) {
    r.header("Retry-After", "1");  // A heartbeat or two; another gateway may answer at once.
  }
  return r;
}

std::string responseHead(const Response& r, const HeadOptions& o) {
  // Literals as views: their lengths are known when compiled, not measured on every append.
  using namespace std::string_view_literals;
  std::array<char, kNumberBytes> status{};
  std::array<char, kNumberBytes> length{};
  std::string head;
  head.reserve(kHeadReserve);
  head.append(o.version == 10 ? "HTTP/1.0 "sv : "HTTP/1.1 "sv)
      .append(status.data(), std::to_chars(status.begin(), status.end(), r.status).ptr)
      .append(" "sv)
      .append(reasonPhrase(r.status))
      .append("\r\nContent-Type: "sv)
      .append(r.content_type);
  switch (o.framing) {
    case Framing::Length:
      head.append("\r\nContent-Length: "sv)
          .append(length.data(), std::to_chars(length.begin(), length.end(), o.length).ptr);
      break;
    case Framing::Chunked:
      head.append("\r\nTransfer-Encoding: chunked"sv);
      break;
    case Framing::UntilClose:
      break;
  }
  for (const auto& [name, value] : r.headers) {
    head.append("\r\n"sv).append(name).append(": "sv).append(value);
  }
  if (!o.request_id.empty()) {
    head.append("\r\nx-request-id: "sv).append(o.request_id);
  }
  const bool keep_alive = o.keep_alive && o.framing != Framing::UntilClose;
  if (o.version >= 11 && !keep_alive) {
    head.append("\r\nConnection: close"sv);
  } else if (o.version == 10 && keep_alive) {
    head.append("\r\nConnection: keep-alive"sv);
  }
  head.append("\r\n\r\n"sv);
  return head;
}

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 302:
      return "Found";
    case 303:
      return "See Other";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 402:
      return "Payment Required";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 499:
      return "Client Closed Request";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "Unknown";
  }
}

}  // namespace tollgate::http
