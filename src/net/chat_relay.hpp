// POST /v1/chat/completions, from body to response: decode, resolve, call the providers in
// routing order (falling back before any byte reached the client), relay JSON or SSE.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/error.hpp"
#include "net/upstream_call.hpp"

namespace tollgate::net {

/// The client side of one exchange. Every call returns false once the client is gone.
class ClientStream {
 public:
  virtual ~ClientStream() = default;
  virtual boost::asio::awaitable<bool> send(int status, std::string_view content_type,
                                            std::string body) = 0;
  virtual boost::asio::awaitable<bool> beginEventStream() = 0;
  virtual boost::asio::awaitable<bool> sendEvents(std::string events) = 0;
  virtual boost::asio::awaitable<bool> endEventStream() = 0;

  boost::asio::awaitable<bool> sendError(const Error& error);
};

/// What the access log records of a chat request.
struct ChatOutcome {
  int status = 0;
  std::string model;
  std::chrono::microseconds upstream{0};
};

boost::asio::awaitable<ChatOutcome> relayChat(const config::Config& config,
                                              UpstreamClient& upstream, std::string& body,
                                              ClientStream& client);

}  // namespace tollgate::net
