// Fakes for the tests of the request path: a transport that answers each provider by a script
// and records what it was asked to send, the client in memory, a request's headers, and an
// outbound HTTP client that reaches nothing.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "http/outbound.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"
#include "providers/transport.hpp"

namespace tollgate::test {

namespace asio = boost::asio;

/// An upstream's scripted answer: a transport failure, or a status, content type and body.
struct Script {
  std::optional<Error> failure;
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

inline Script failing(Error e) { return Script{std::move(e), 0, "", ""}; }

/// Answers each provider by its script and records every request it was asked to send.
class FakeTransport final : public providers::Transport {
 public:
  std::map<std::string, Script> scripts;
  /// Answers given once each, in order, before the provider's script.
  std::map<std::string, std::deque<Script>> queued;
  /// Headers of every answer of a provider.
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> headers;
  std::vector<std::pair<std::string, providers::UpstreamRequest>> sent;
  /// Providers whose answers come over a connection: true, one the pool kept.
  std::map<std::string, bool> connections;

  asio::awaitable<Result<std::unique_ptr<providers::UpstreamCall>>> start(
      const config::Provider& p, providers::UpstreamRequest request) override {
    sent.emplace_back(p.name, std::move(request));
    auto& queue = queued[p.name];
    const Script s = queue.empty() ? scripts.at(p.name) : queue.front();
    if (!queue.empty()) {
      queue.pop_front();
    }
    if (s.failure) {
      co_return *s.failure;
    }
    auto call = std::make_unique<providers::BufferedCall>(s.status, s.content_type, s.body);
    call->headers = headers[p.name];
    if (const auto kept = connections.find(p.name); kept != connections.end()) {
      call->connection =
          providers::UpstreamCall::Connected{std::chrono::steady_clock::now(), kept->second};
    }
    co_return std::unique_ptr<providers::UpstreamCall>(std::move(call));
  }
};

/// The client, in memory.
class MemoryWriter final : public http::ResponseWriter {
 public:
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  bool streamed = false;
  bool ended = false;

  asio::awaitable<bool> send(http::Response r) override {
    status = r.status;
    headers = r.headers;
    body = std::move(r.body);
    co_return true;
  }
  asio::awaitable<bool> beginStream(http::Response r) override {
    status = r.status;
    streamed = true;
    co_return true;
  }
  asio::awaitable<bool> flush() override { co_return true; }
  asio::awaitable<bool> write(std::string_view piece) override {
    body += piece;
    co_return true;
  }
  asio::awaitable<bool> endStream(std::string_view last) override {
    body += last;
    ended = true;
    co_return true;
  }
  bool ok() const override { return true; }
};

/// A request's headers, set by the test.
class MapHeaders final : public http::Headers {
 public:
  std::map<std::string, std::string, std::less<>> values;

  std::string_view get(std::string_view name) const override {
    const auto it = values.find(name);
    return it != values.end() ? std::string_view(it->second) : std::string_view{};
  }
};

/// No service the configuration names is reached in these tests.
class NoOutbound final : public http::OutboundHttp {
 public:
  asio::awaitable<Result<http::OutboundResponse>> send(http::OutboundRequest) override {
    co_return Error{ErrorKind::UpstreamUnavailable, "no outbound HTTP in this test", ""};
  }
};

}  // namespace tollgate::test
