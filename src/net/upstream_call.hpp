// One exchange with an upstream, seen by the relay: the status, then the body piece by piece.
// Implemented over pooled HTTP(S) connections and, for the dummy provider, in process.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
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

  /// The answer's Content-Type header, as sent.
  virtual std::string_view contentType() const = 0;

  /// The next piece of the body; an empty view once the body is complete. The view is valid
  /// until the next call.
  virtual boost::asio::awaitable<Result<std::string_view>> readSome() = 0;

  /// Reads the rest of the body, failing past `limit` bytes.
  boost::asio::awaitable<Result<std::string>> readAll(std::size_t limit);

  /// Reads and discards what is left of the answer for at most `budget`, so that its connection
  /// can be reused; past the budget the connection is closed instead. Never waits longer.
  virtual boost::asio::awaitable<void> finish(std::chrono::milliseconds budget) = 0;
};

/// Starts upstream exchanges; one per worker thread, owning that thread's connection pool.
class UpstreamClient {
 public:
  virtual ~UpstreamClient() = default;

  /// Sends `body` as POST `path` to the provider and waits for the final response header.
  virtual boost::asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> start(
      const config::Provider& provider, const std::string& path, std::string body, bool stream) = 0;

  /// Closes every connection, idle or in use: calls in progress and later ones fail with
  /// ServiceUnavailable. For shutdown; call on the client's own thread.
  virtual void close() = 0;
};

/// The client for a worker's io_context, with keep-alive pooling and TLS (certificates verified).
/// It must outlive every call it started.
std::unique_ptr<UpstreamClient> makeHttpUpstreamClient(boost::asio::io_context& ioc);

}  // namespace tollgate::net
