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
#include "providers/secret_redactor.hpp"

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

/// What the access log records of a chat request; filled in as the exchange goes, so that it
/// is right even when the client leaves half-way.
struct ChatOutcome {
  int status = 0;  ///< The status the client effectively saw: an in-stream error's, not 200.
  std::string model;
  std::chrono::microseconds upstream{0};
};

/// Serves one chat completion request `body` to `client`. Upstream text is passed through
/// `redactor` before anything of it reaches the client.
boost::asio::awaitable<void> relayChat(const config::Config& config, UpstreamClient& upstream,
                                       const providers::SecretRedactor& redactor, std::string& body,
                                       ClientStream& client, ChatOutcome& outcome);

}  // namespace tollgate::net
