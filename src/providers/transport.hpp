// The Transport port: moves an upstream request's bytes and hands back the answer, the status,
// then the body piece by piece. Over pooled HTTP(S) connections (net/upstream_pool) or, for the
// dummy provider, in process. Adapters decide what the bytes mean; transports only move them.
// The one coroutine interface of providers/: adapters and openai/ compile without Asio.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "core/result.hpp"
#include "providers/upstream_request.hpp"

namespace tollgate::providers {

class UpstreamCall {
 public:
  virtual ~UpstreamCall() = default;

  virtual int status() const = 0;

  /// The answer's Content-Type header, as sent.
  virtual std::string_view contentType() const = 0;

  /// The value of the answer's header `name` (e.g. Retry-After); empty when it has none.
  virtual std::string_view header(std::string_view /*name*/) const { return {}; }

  /// How the call reached its upstream: when a connection took its request, and whether the
  /// pool had kept that connection (nullopt: no connection, an in-process answer).
  struct Connected {
    std::chrono::steady_clock::time_point at;
    bool reused = false;
  };
  virtual std::optional<Connected> connected() const { return std::nullopt; }

  /// True when readSome() would not wait: body bytes (or the end) are already here.
  virtual bool ready() const = 0;

  /// The next piece of the body; an empty view once the body is complete. The view is valid
  /// until the next call.
  virtual boost::asio::awaitable<Result<std::string_view>> readSome() = 0;

  /// Reads the rest of the body, failing past `limit` bytes.
  boost::asio::awaitable<Result<std::string>> readAll(std::size_t limit);

  /// Reads and discards what is left of the answer for at most `budget`, so that its connection
  /// can be reused; past the budget the connection is closed instead. Never waits longer.
  virtual boost::asio::awaitable<void> finish(std::chrono::milliseconds budget) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;

  /// Sends `request` to `provider` and waits for the final answer's head, within the provider's
  /// timeouts. Errors: UpstreamUnavailable, UpstreamTimeout, UpstreamError, ServiceUnavailable
  /// (shutting down).
  virtual boost::asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> start(
      const config::Provider& provider, UpstreamRequest request) = 0;
};

/// An answer already complete in memory: an in-process provider's, or a test's.
class BufferedCall final : public UpstreamCall {
 public:
  BufferedCall(int status, std::string content_type, std::string body)
      : status_(status), content_type_(std::move(content_type)), body_(std::move(body)) {}

  /// The answer's other headers (names compared without regard to case).
  std::vector<std::pair<std::string, std::string>> headers;
  /// The connection a test's answer says it came over (none for an in-process provider's).
  std::optional<Connected> connection;

  int status() const override { return status_; }
  std::string_view contentType() const override { return content_type_; }
  std::string_view header(std::string_view name) const override;
  std::optional<Connected> connected() const override { return connection; }
  bool ready() const override { return true; }
  boost::asio::awaitable<Result<std::string_view>> readSome() override;
  boost::asio::awaitable<void> finish(std::chrono::milliseconds) override { co_return; }

 private:
  int status_;
  std::string content_type_;
  std::string body_;
  bool read_ = false;
};

}  // namespace tollgate::providers
