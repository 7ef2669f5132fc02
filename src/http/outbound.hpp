// The OutboundHttp port: HTTP(S) requests a handler makes to a service named in the
// configuration (an identity provider's discovery, token and key endpoints), as Transport is for
// upstream models. net/ implements it over the worker's upstream pool (TLS verified, timeouts,
// pooled connections), so handlers never depend on net/. Addresses come from the configuration,
// never from a client.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "core/result.hpp"

namespace tollgate::http {

struct OutboundRequest {
  config::UpstreamUrl base;  ///< Scheme, host and port (its path is not used).
  std::string method = "GET";
  std::string path = "/";  ///< Absolute path on that host, with its query string if any.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;  ///< Of `body`; empty when there is none.
  std::string body;
  std::chrono::milliseconds timeout{10'000};     ///< For the whole exchange.
  std::size_t max_response_bytes = 1024 * 1024;  ///< A longer answer is an error.
};

struct OutboundResponse {
  int status = 0;
  std::string content_type;
  std::string body;
};

class OutboundHttp {
 public:
  virtual ~OutboundHttp() = default;
  /// Sends `request` and reads the whole answer, whatever its status. Errors:
  /// UpstreamUnavailable, UpstreamTimeout, UpstreamError (too large, malformed).
  virtual boost::asio::awaitable<Result<OutboundResponse>> send(OutboundRequest request) = 0;
};

}  // namespace tollgate::http
