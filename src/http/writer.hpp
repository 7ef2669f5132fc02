// Where a handler puts its answer: one whole response, or a streamed one (head, pieces, end).
// The session implements it over the client's connection; tests implement it in memory. It adds
// Content-Length or chunked framing, Connection and x-request-id.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "http/response.hpp"

namespace tollgate::http {

class ResponseWriter {
 public:
  virtual ~ResponseWriter() = default;

  /// Sends `response` whole. False once the client is gone.
  virtual boost::asio::awaitable<bool> send(Response response) = 0;

  /// Starts a streamed response with `head`'s status and headers (its body is ignored). The head
  /// is held back and leaves with the first piece, or with flush().
  virtual boost::asio::awaitable<bool> beginStream(Response head) = 0;
  /// Sends the head of a stream begun but not yet sent.
  virtual boost::asio::awaitable<bool> flush() = 0;
  /// Sends one piece of a streamed body; empty pieces are skipped.
  virtual boost::asio::awaitable<bool> write(std::string_view piece) = 0;
  /// Sends `last` (may be empty) and ends a streamed body, in one write.
  virtual boost::asio::awaitable<bool> endStream(std::string_view last) = 0;

  /// False once a write failed: the client is gone.
  virtual bool ok() const = 0;

  boost::asio::awaitable<bool> sendError(const Error& e) {
    co_return co_await send(Response::error(e));
  }

  /// Sends `r` whole, or when `streamed` as a stream whose events are all of its body, at once
  /// (an answer that was kept: a replay, a cache hit).
  boost::asio::awaitable<bool> sendKept(Response r, bool streamed) {
    if (!streamed) {
      co_return co_await send(std::move(r));
    }
    std::string events = std::move(r.body);
    r.body.clear();
    if (!co_await beginStream(std::move(r))) {
      co_return false;
    }
    co_return co_await endStream(events);
  }

  /// A header every response of this request carries (e.g. Deprecation), whoever sends it.
  void addHeader(std::string name, std::string value) {
    extra_headers_.emplace_back(std::move(name), std::move(value));
  }
  /// As addHeader, replacing a value set before under the same name (exact case).
  void setHeader(std::string name, std::string value) {
    for (auto& [n, v] : extra_headers_) {
      if (n == name) {
        v = std::move(value);
        return;
      }
    }
    addHeader(std::move(name), std::move(value));
  }

 protected:
  /// Adds the headers of addHeader() to `r`.
  void decorate(Response& r) const {
    r.headers.insert(r.headers.end(), extra_headers_.begin(), extra_headers_.end());
  }

 private:
  std::vector<std::pair<std::string, std::string>> extra_headers_;
};

}  // namespace tollgate::http
