// A whole response (status, headers, body) and the serialisation of response heads. Written by
// hand: Beast's serializer costs several times more on the hot path.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace tollgate::http {

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  /// Headers besides Content-Type, Content-Length, Connection and x-request-id, which the
  /// writer adds. Names and values come from the gateway, never raw from a client.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;

  static Response json(int status, std::string body);
  /// The spec's error body (§2.7) with the error's status; a 401 names the Bearer scheme in
  /// WWW-Authenticate.
  static Response error(const Error& e);
  /// The head of a stream of server-sent events: never cached, never buffered by a proxy.
  static Response eventStream();

  Response& header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

/// How the body of a response is delimited on the wire.
enum class Framing { Length, Chunked, UntilClose };

struct HeadOptions {
  unsigned version = 11;  ///< 10 or 11.
  bool keep_alive = true;
  Framing framing = Framing::Length;
  std::size_t length = 0;  ///< With Framing::Length.
  std::string_view request_id;
};

/// The status line and header block of `r` (its body is not written), ending in CRLF CRLF.
std::string responseHead(const Response& r, const HeadOptions& options);

/// The reason phrase of a status code, e.g. "Not Found"; "Unknown" for codes we never send.
std::string_view reasonPhrase(int status);

}  // namespace tollgate::http
