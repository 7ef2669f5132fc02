#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>
#include <unordered_map>
#include <vector>

#include "net/upstream_call.hpp"

namespace tollgate::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMaxIdlePerUpstream = 128;
constexpr std::size_t kReadBufferBytes = 16 * 1024;
constexpr std::uint32_t kMaxResponseHeaderBytes = 64 * 1024;
constexpr std::size_t kRequestHeadReserve = 256;

struct Connection {
  std::string key;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  std::array<char, kReadBufferBytes> body;  ///< Pieces of the current answer's body.

  beast::tcp_stream& tcp() { return plain ? *plain : beast::get_lowest_layer(*tls); }

  template <class F>
  auto visit(F&& f) {
    return plain ? f(*plain) : f(*tls);
  }
};

std::string poolKey(const config::Provider& p) {
  return (p.api_base.tls ? "s:" : "p:") + p.api_base.host + ":" + p.api_base.port;
}

Error unavailable(const config::Provider& p, const beast::error_code& ec) {
  return Error{ErrorKind::UpstreamUnavailable,
               "cannot reach upstream provider '" + p.name + "': " + ec.message(), ""};
}

Error timedOut(const config::Provider& p, std::string_view what) {
  return Error{ErrorKind::UpstreamTimeout,
               "upstream provider '" + p.name + "' timed out " + std::string(what), ""};
}

/// The request line and headers of a chat call. Written by hand: Beast's serializer costs
/// several times more on this hot path. Config load keeps control characters out of the parts.
std::string requestHead(const config::Provider& p, const std::string& path, bool stream,
                        std::size_t length) {
  const auto& url = p.api_base;
  const bool ipv6 = url.host.find(':') != std::string::npos;
  const bool default_port = url.port == (url.tls ? "443" : "80");
  std::string head;
  head.reserve(kRequestHeadReserve + p.api_key.size());
  head.append("POST ").append(path).append(" HTTP/1.1\r\nHost: ");
  head.append(ipv6 ? "[" : "").append(url.host).append(ipv6 ? "]" : "");
  if (!default_port) {
    head.append(":").append(url.port);
  }
  head.append("\r\nUser-Agent: tollgate\r\nContent-Type: application/json\r\nAccept: ")
      .append(stream ? "text/event-stream" : "application/json");
  if (!p.api_key.empty()) {
    head.append("\r\nAuthorization: Bearer ").append(p.api_key);
  }
  head.append("\r\nContent-Length: ").append(std::to_string(length)).append("\r\n\r\n");
  return head;
}

class Pool;

class HttpCall final : public UpstreamCall {
 public:
  HttpCall(Pool& pool, std::unique_ptr<Connection> conn, const config::Provider& provider,
           Clock::time_point deadline)
      : pool_(pool), conn_(std::move(conn)), provider_(provider), deadline_(deadline) {
    parser_.header_limit(kMaxResponseHeaderBytes);
    parser_.body_limit(boost::none);  // Bounded by the caller (readAll) and the total timeout.
  }
  ~HttpCall() override;

  int status() const override { return static_cast<int>(parser_.get().result_int()); }
  asio::awaitable<Result<std::string_view>> readSome() override;

  http::response_parser<http::buffer_body>& parser() { return parser_; }
  Connection& connection() { return *conn_; }

 private:
  Pool& pool_;
  std::unique_ptr<Connection> conn_;
  const config::Provider& provider_;
  Clock::time_point deadline_;
  bool body_deadline_armed_ = false;
  http::response_parser<http::buffer_body> parser_;
};

class Pool final : public UpstreamClient {
 public:
  explicit Pool(asio::io_context& ioc) : ioc_(ioc) {}

  asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> start(const config::Provider& provider,
                                                               const std::string& path,
                                                               std::string body,
                                                               bool stream) override;

  void giveBack(std::unique_ptr<Connection> conn) {
    auto& idle = idle_[conn->key];
    if (idle.size() < kMaxIdlePerUpstream) {
      conn->tcp().expires_never();
      idle.push_back(std::move(conn));
    }
  }

 private:
  std::unique_ptr<Connection> take(const std::string& key) {
    auto it = idle_.find(key);
    if (it == idle_.end() || it->second.empty()) {
      return nullptr;
    }
    auto conn = std::move(it->second.back());
    it->second.pop_back();
    return conn;
  }

  asio::awaitable<Result<std::unique_ptr<Connection>>> connect(const config::Provider& p);

  /// Made on the first TLS connection: loading the CA store costs tens of milliseconds.
  ssl::context& tlsContext() {
    if (!ssl_) {
      ssl_.emplace(ssl::context::tls_client);
      ssl_->set_default_verify_paths();
      ssl_->set_verify_mode(ssl::verify_peer);
    }
    return *ssl_;
  }

  asio::io_context& ioc_;
  std::optional<ssl::context> ssl_;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>> idle_;
};

HttpCall::~HttpCall() {
  if (conn_ && parser_.is_done() && parser_.keep_alive()) {
    pool_.giveBack(std::move(conn_));
  }
}

asio::awaitable<Result<std::string_view>> HttpCall::readSome() {
  if (!body_deadline_armed_) {
    conn_->tcp().expires_at(deadline_);
    body_deadline_armed_ = true;
  }
  while (!parser_.is_done()) {
    auto& buf = conn_->body;
    parser_.get().body().data = buf.data();
    parser_.get().body().size = buf.size();
    auto [ec, n] = co_await conn_->visit(
        [&](auto& s) { return http::async_read_some(s, conn_->buffer, parser_, kUseTuple); });
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (ec == beast::error::timeout) {
      co_return timedOut(provider_, "while sending its answer");
    }
    if (ec) {
      co_return Error{
          ErrorKind::UpstreamError,
          "the connection to upstream provider '" + provider_.name + "' failed: " + ec.message(),
          ""};
    }
    const std::size_t got = buf.size() - parser_.get().body().size;
    if (got > 0) {
      co_return std::string_view(buf.data(), got);
    }
  }
  co_return std::string_view{};
}

asio::awaitable<Result<std::unique_ptr<Connection>>> Pool::connect(const config::Provider& p) {
  auto conn = std::make_unique<Connection>();
  conn->key = poolKey(p);
  const auto& url = p.api_base;
  if (url.tls) {
    conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc_, tlsContext());
  } else {
    conn->plain = std::make_unique<beast::tcp_stream>(ioc_);
  }
  tcp::resolver resolver(ioc_);
  auto [rec, endpoints] = co_await resolver.async_resolve(url.host, url.port, kUseTuple);
  if (rec) {
    co_return unavailable(p, rec);
  }
  conn->tcp().expires_after(p.connect_timeout);
  auto [cec, ep] = co_await conn->tcp().async_connect(endpoints, kUseTuple);
  if (cec == beast::error::timeout) {
    co_return timedOut(p, "while connecting");
  }
  if (cec) {
    co_return unavailable(p, cec);
  }
  conn->tcp().socket().set_option(tcp::no_delay(true));
  if (conn->tls) {
    if (!SSL_set_tlsext_host_name(conn->tls->native_handle(), url.host.c_str())) {
      co_return Error{ErrorKind::UpstreamUnavailable, "cannot set TLS server name", ""};
    }
    conn->tls->set_verify_callback(ssl::host_name_verification(url.host));
    auto [hec] = co_await conn->tls->async_handshake(ssl::stream_base::client, kUseTuple);
    if (hec == beast::error::timeout) {
      co_return timedOut(p, "during the TLS handshake");
    }
    if (hec) {
      co_return unavailable(p, hec);
    }
  }
  co_return std::move(conn);
}

asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> Pool::start(const config::Provider& p,
                                                                   const std::string& path,
                                                                   std::string body, bool stream) {
  const auto started = Clock::now();
  const auto deadline = started + p.total_timeout;
  const std::string head = requestHead(p, path, stream, body.size());
  const std::array<asio::const_buffer, 2> request{asio::buffer(head), asio::buffer(body)};

  // A pooled connection may have been closed by the upstream while idle; such a failure before
  // any answer byte is retried once on a fresh connection.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Connection> conn = attempt == 0 ? take(poolKey(p)) : nullptr;
    const bool reused = conn != nullptr;
    if (!conn) {
      auto fresh = co_await connect(p);
      if (!fresh) {
        co_return std::move(fresh).error();
      }
      conn = std::move(fresh).value();
    }
    const auto first_byte = std::min(started + p.first_byte_timeout, deadline);
    conn->tcp().expires_at(first_byte);
    auto [wec, wn] =
        co_await conn->visit([&](auto& s) { return asio::async_write(s, request, kUseTuple); });
    if (wec && reused && wec != beast::error::timeout) {
      continue;
    }
    if (wec) {
      co_return wec == beast::error::timeout ? timedOut(p, "while receiving the request")
                                             : unavailable(p, wec);
    }
    auto call = std::make_unique<HttpCall>(*this, std::move(conn), p, deadline);
    Connection& c = call->connection();  // Its first-byte deadline is already armed.
    auto [rec, rn] = co_await c.visit(
        [&](auto& s) { return http::async_read_header(s, c.buffer, call->parser(), kUseTuple); });
    if (rec && reused && !call->parser().got_some() && rec != beast::error::timeout) {
      continue;
    }
    if (rec == beast::error::timeout) {
      co_return timedOut(p, "before answering");
    }
    if (rec) {
      co_return Error{
          ErrorKind::UpstreamError,
          "upstream provider '" + p.name + "' sent no valid HTTP answer: " + rec.message(), ""};
    }
    co_return std::unique_ptr<UpstreamCall>(std::move(call));
  }
  co_return Error{ErrorKind::UpstreamUnavailable,
                  "upstream provider '" + p.name + "' closed the connection", ""};
}

}  // namespace

asio::awaitable<Result<std::string>> UpstreamCall::readAll(std::size_t limit) {
  std::string out;
  for (;;) {
    auto piece = co_await readSome();
    if (!piece) {
      co_return std::move(piece).error();
    }
    if (piece->empty()) {
      co_return out;
    }
    if (out.size() + piece->size() > limit) {
      co_return Error{ErrorKind::UpstreamError, "the upstream's answer is too large", ""};
    }
    out.append(*piece);
  }
}

std::unique_ptr<UpstreamClient> makeHttpUpstreamClient(asio::io_context& ioc) {
  return std::make_unique<Pool>(ioc);
}

}  // namespace tollgate::net
