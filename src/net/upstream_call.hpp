// One exchange with an upstream, seen by the relay: the status, then the body piece by piece.
// Implemented over pooled HTTP(S) connections and, for the dummy provider, in process.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"

namespace tollgate::net {

class UpstreamCall {
 public:
  virtual ~UpstreamCall() = default;

  virtual int status() const = 0;

  /// The next piece of the body; an empty view once the body is complete. The view is valid
  /// until the next call.
  virtual boost::asio::awaitable<Result<std::string_view>> readSome() = 0;

  /// Reads the rest of the body, failing past `limit` bytes.
  boost::asio::awaitable<Result<std::string>> readAll(std::size_t limit);
};

/// Starts upstream exchanges; one per worker thread, owning that thread's connection pool.
class UpstreamClient {
 public:
  virtual ~UpstreamClient() = default;

  /// Sends `body` as POST `path` to the provider and waits for the response header.
  virtual boost::asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> start(
      const config::Provider& provider, const std::string& path, std::string body, bool stream) = 0;
};

/// The client for a worker's io_context, with keep-alive pooling and TLS (certificates verified).
std::unique_ptr<UpstreamClient> makeHttpUpstreamClient(boost::asio::io_context& ioc);

}  // namespace tollgate::net
