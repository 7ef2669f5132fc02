#include "net/upstream_pool.hpp"

#include <netdb.h>
#include <poll.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <chrono>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "net/http_readers.hpp"
#include "net/lazy_deadline.hpp"
#include "net/write_now.hpp"

namespace tollgate::net {
namespace {

using providers::UpstreamCall;
using providers::UpstreamRequest;

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
// Literals as views: their lengths are known when compiled, not measured on every append.
using namespace std::string_view_literals;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kMaxIdlePerUpstream = 128;
constexpr std::size_t kReadBytes = 16 * 1024;
constexpr std::size_t kRequestHeadReserve = 256;
constexpr std::size_t kLengthBytes = 24;  ///< A Content-Length in decimal, with room to spare.
/// An upload is sent upstream in pieces of this size, read from where it is spooled.
constexpr std::size_t kAttachmentPieceBytes = 64 * 1024;

struct Connection {
  explicit Connection(std::unordered_set<Connection*>& registry) : registry_(registry) {
    registry_.insert(this);
  }
  ~Connection() { registry_.erase(this); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  std::string key;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  /// The current call's deadline, once connected (the connection's own are Beast's). Declared
  /// after the streams: it goes first.
  std::optional<LazyDeadline> deadline;
  beast::flat_buffer buffer;
  std::array<char, kReadBytes> body;  ///< Pieces of the current answer's body.
  Clock::time_point idle_since;

  beast::tcp_stream& tcp() { return plain ? *plain : beast::get_lowest_layer(*tls); }

  /// Reads what arrives into `buffer`, never past the response reader's bound.
  asio::awaitable<std::tuple<beast::error_code, std::size_t>> readMore() {
    if (deadline->expired()) {
      co_return std::make_tuple(beast::error_code(beast::error::timeout), std::size_t{0});
    }
    const std::size_t room = std::min(kReadBytes, readRoom(buffer, ResponseReader::bufferLimit()));
    // A plain connection is read on its socket: Beast's stream would pass Asio a buffer
    // sequence of its own, which Asio reads with recvmsg, not recv, and wrap the read in an
    // operation of its own; the deadline is this call's, not the stream's.
    const auto room_at = buffer.prepare(room);
    // An if, not a conditional expression: a co_await of one, built by GCC 12, read a plain
    // connection through its (null) TLS stream.
    std::tuple<beast::error_code, std::size_t> read;
    if (plain) {
      read = co_await plain->socket().async_read_some(room_at, kUseTuple);
    } else {
      read = co_await tls->async_read_some(room_at, kUseTuple);
    }
    auto [ec, n] = read;
    buffer.commit(n);
    co_return std::make_tuple(timedOut(ec), n);
  }

  /// An operation the deadline cancelled ended in a timeout, as one of Beast's would say; any
  /// other cancellation (the client left, shutdown) is what it is.
  beast::error_code timedOut(const beast::error_code& ec) const {
    return ec == asio::error::operation_aborted && deadline->expired()
               ? beast::error_code(beast::error::timeout)
               : ec;
  }

  /// True when nothing arrived while the connection was idle: no byte (which would belong to
  /// no request), no close, no error. Checked before reuse.
  bool quiet() {
    if (tls && SSL_pending(tls->native_handle()) > 0) {
      return false;
    }
    pollfd fd{tcp().socket().native_handle(), POLLIN, 0};
    return ::poll(&fd, 1, 0) == 0;
  }

 private:
  std::unordered_set<Connection*>& registry_;
};

constexpr int kMaxLookupsInFlight = 64;
std::atomic<int> lookups_in_flight{0};

/// A name lookup shared by the connection attempt that waits for it and the thread that runs
/// it. getaddrinfo cannot be interrupted, so a lookup that outlives its deadline (or its worker,
/// at shutdown) finishes on its own thread and touches nothing but this state: the waiting
/// attempt's timer is reached only while `waiting`, and only on the attempt's own thread.
struct NameLookup {
  std::mutex mu;
  bool waiting = true;
  bool done = false;
  int status = 0;  ///< getaddrinfo's result.
  std::vector<tcp::endpoint> endpoints;
  asio::steady_timer* timer = nullptr;
};

/// Runs getaddrinfo for `host` on a detached thread, then wakes the waiting attempt (if any).
void startLookup(const std::shared_ptr<NameLookup>& lookup, asio::any_io_executor executor,
                 std::string host, std::string port) {
  ++lookups_in_flight;
  std::thread([lookup, executor = std::move(executor), host = std::move(host),
               port = std::move(port)] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    const int status = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
    std::vector<tcp::endpoint> endpoints;
    for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
      if (a->ai_family == AF_INET || a->ai_family == AF_INET6) {
        tcp::endpoint e;
        std::memcpy(e.data(), a->ai_addr, a->ai_addrlen);
        e.resize(a->ai_addrlen);
        endpoints.push_back(e);
      }
    }
    if (list != nullptr) {
      ::freeaddrinfo(list);
    }
    --lookups_in_flight;
    const std::lock_guard lock(lookup->mu);
    lookup->done = true;
    lookup->status = status;
    lookup->endpoints = std::move(endpoints);
    if (lookup->waiting) {
      asio::post(executor, [lookup] {
        const std::lock_guard lock(lookup->mu);
        if (lookup->waiting) {
          lookup->timer->cancel();
        }
      });
    }
  }).detach();
}

/// Marks a lookup as no longer waited for, however the waiting ends (even by destruction).
class StopWaiting {
 public:
  explicit StopWaiting(NameLookup& lookup) : lookup_(lookup) {}
  ~StopWaiting() {
    const std::lock_guard lock(lookup_.mu);
    lookup_.waiting = false;
    lookup_.timer = nullptr;
  }
  StopWaiting(const StopWaiting&) = delete;
  StopWaiting& operator=(const StopWaiting&) = delete;

 private:
  NameLookup& lookup_;
};

/// The endpoint of a host that is an IPv4 or IPv6 address (the configuration keeps them without
/// brackets): it needs no lookup, nor a thread for one. None for a host name.
std::optional<tcp::endpoint> addressEndpoint(const config::UpstreamUrl& url) {
  beast::error_code not_an_address;
  const asio::ip::address address = asio::ip::make_address(url.host, not_an_address);
  unsigned short port = 0;
  const char* end = url.port.data() + url.port.size();
  const auto [at, err] = std::from_chars(url.port.data(), end, port);
  if (not_an_address || err != std::errc{} || at != end) {
    return std::nullopt;
  }
  return tcp::endpoint(address, port);
}

std::string poolKey(const config::Provider& p) {
  const config::UpstreamUrl& url = p.api_base;
  std::string key;
  key.reserve(url.host.size() + url.port.size() + 3);
  key.append(url.tls ? "s:"sv : "p:"sv).append(url.host).append(":"sv).append(url.port);
  return key;
}

bool isEof(const beast::error_code& ec) {
  return ec == asio::error::eof || ec == ssl::error::stream_truncated;
}

Error unavailable(const config::Provider& p, const beast::error_code& ec) {
  return Error{ErrorKind::UpstreamUnavailable,
               "cannot reach upstream provider '" + p.name + "': " + ec.message(), ""};
}

Error timedOut(const config::Provider& p, std::string_view what) {
  return Error{ErrorKind::UpstreamTimeout,
               "upstream provider '" + p.name + "' timed out " + std::string(what), ""};
}

Error shuttingDown() {
  return Error{ErrorKind::ServiceUnavailable, "the gateway is shutting down", ""};
}

/// The Host header's value for `url`: its host (an IPv6 address in brackets), and its port
/// unless it is the scheme's default.
void appendHost(std::string& out, const config::UpstreamUrl& url) {
  const bool ipv6 = url.host.find(':') != std::string::npos;
  out.append(ipv6 ? "["sv : ""sv).append(url.host).append(ipv6 ? "]"sv : ""sv);
  if (url.port != (url.tls ? "443"sv : "80"sv)) {
    out.append(":"sv).append(url.port);
  }
}

/// The request line and headers. Written by hand: Beast's serializer costs several times more
/// on this hot path. Config load keeps control characters out of the parts; the adapter's
/// headers are the gateway's own.
std::string requestHead(const config::Provider& p, const UpstreamRequest& r) {
  std::size_t size = kRequestHeadReserve + r.path.size();
  for (const auto& [name, value] : r.headers) {
    size += name.size() + value.size() + 4;
  }
  std::array<char, kLengthBytes> length{};
  std::string head;
  head.reserve(size);
  head.append(r.method).append(" "sv).append(r.path).append(" HTTP/1.1\r\nHost: "sv);
  appendHost(head, p.api_base);
  head.append("\r\nUser-Agent: tollgate"sv);
  if (!r.content_type.empty()) {
    head.append("\r\nContent-Type: "sv).append(r.content_type);
  }
  for (const auto& [name, value] : r.headers) {
    head.append("\r\n"sv).append(name).append(": "sv).append(value);
  }
  head.append("\r\nContent-Length: "sv)
      .append(length.data(), std::to_chars(length.begin(), length.end(), r.contentLength()).ptr)
      .append("\r\n\r\n"sv);
  return head;
}

class Pool;

class HttpCall final : public UpstreamCall {
 public:
  HttpCall(Pool& pool, std::unique_ptr<Connection> conn, Connected connected,
           const config::Provider& provider, Clock::time_point deadline,
           Clock::time_point first_body_deadline)
      : pool_(pool),
        conn_(std::move(conn)),
        connected_(connected),
        provider_(provider),
        deadline_(deadline),
        first_body_deadline_(std::min(first_body_deadline, deadline)) {}
  ~HttpCall() override;

  int status() const override { return reader_.status(); }
  std::string_view contentType() const override { return reader_.contentType(); }
  std::string_view header(std::string_view name) const override { return reader_.header(name); }
  std::optional<Connected> connected() const override { return connected_; }
  bool ready() const override { return reader_.complete() || conn_->buffer.size() > 0; }
  asio::awaitable<Result<std::string_view>> readSome() override;
  asio::awaitable<void> finish(std::chrono::milliseconds budget) override;

  /// Reads up to the final answer's head; the first-byte deadline is already armed.
  asio::awaitable<Status> readHead();

 private:
  /// Our error for a failed read: a timeout, the pool closed at shutdown, or a broken connection.
  Error readFailure(const beast::error_code& ec, std::string_view when) const;
  /// Our error for an answer the reader refused (bad framing, an oversized head, …).
  Error readerFailure() const {
    return Error{ErrorKind::UpstreamError,
                 "upstream provider '" + provider_.name + "' " + reader_.error().message, ""};
  }

  Pool& pool_;
  std::unique_ptr<Connection> conn_;
  Connected connected_;
  const config::Provider& provider_;
  Clock::time_point deadline_;
  Clock::time_point first_body_deadline_;
  /// Which deadline the body's reads run under: none yet, the first bytes', the whole answer's.
  enum class Armed { None, FirstBytes, Whole } armed_ = Armed::None;
  ResponseReader reader_;
};

class Pool final : public UpstreamPool {
 public:
  explicit Pool(asio::io_context& ioc) : ioc_(ioc) {}

  asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> start(const config::Provider& provider,
                                                               UpstreamRequest request) override;

  void close() override {
    closed_ = true;
    idle_.clear();
    for (Connection* c : live_) {
      beast::error_code ignored;
      c->tcp().socket().close(ignored);
    }
  }

  void drain() override {
    draining_ = true;
    idle_.clear();
  }

  bool closed() const { return closed_; }

  void giveBack(std::unique_ptr<Connection> conn, Clock::duration idle_timeout) {
    if (closed_ || draining_) {
      return;
    }
    auto& idle = idle_[conn->key];
    const auto now = Clock::now();
    // The oldest connections are at the front: drop those that expired.
    const auto fresh = std::find_if(idle.begin(), idle.end(), [&](const auto& c) {
      return now - c->idle_since < idle_timeout;
    });
    idle.erase(idle.begin(), fresh);
    if (idle.size() < kMaxIdlePerUpstream) {
      conn->deadline->clear();
      conn->idle_since = now;
      idle.push_back(std::move(conn));
    }
  }

 private:
  /// The most recently used idle connection that has not expired and is still quiet.
  std::unique_ptr<Connection> take(const std::string& key, Clock::duration idle_timeout) {
    auto it = idle_.find(key);
    if (it == idle_.end()) {
      return nullptr;
    }
    auto& idle = it->second;
    const auto now = Clock::now();
    while (!idle.empty()) {
      auto conn = std::move(idle.back());
      idle.pop_back();
      if (now - conn->idle_since >= idle_timeout) {
        idle.clear();  // The rest are older still.
        return nullptr;
      }
      if (conn->quiet()) {
        return conn;
      }
    }
    return nullptr;
  }

  /// A new connection to `p`, within its connect timeout and `request_deadline`.
  asio::awaitable<Result<std::unique_ptr<Connection>>> connect(const config::Provider& p,
                                                               Clock::time_point request_deadline);
  /// The addresses of `p`'s host name, looked up on a thread of its own by `deadline`.
  asio::awaitable<Result<std::vector<tcp::endpoint>>> lookUp(const config::Provider& p,
                                                             Clock::time_point deadline);

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
  std::unordered_set<Connection*> live_;  ///< Every connection, idle or in use.
  std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>> idle_;
  bool closed_ = false;
  bool draining_ = false;  ///< Shutting down: no connection is kept for another call.
};

HttpCall::~HttpCall() {
  if (conn_ && reader_.reusable(conn_->buffer)) {
    pool_.giveBack(std::move(conn_), provider_.pool_idle_timeout);
  }
}

Error HttpCall::readFailure(const beast::error_code& ec, std::string_view when) const {
  if (pool_.closed()) {
    return shuttingDown();
  }
  if (ec == beast::error::timeout) {
    return timedOut(provider_, when);
  }
  return Error{
      ErrorKind::UpstreamError,
      "the connection to upstream provider '" + provider_.name + "' failed: " + ec.message(), ""};
}

asio::awaitable<Status> HttpCall::readHead() {
  for (;;) {
    switch (reader_.parseHead(conn_->buffer)) {
      case ResponseReader::Step::HeadDone:
        co_return Ok{};
      case ResponseReader::Step::NeedMore:
        break;
      default:
        co_return readerFailure();
    }
    auto [ec, n] = co_await conn_->readMore();
    if (isEof(ec)) {
      co_return Error{
          ErrorKind::UpstreamError,
          "upstream provider '" + provider_.name + "' closed the connection without answering", ""};
    }
    if (ec) {
      co_return readFailure(ec, "before answering");
    }
  }
}

asio::awaitable<Result<std::string_view>> HttpCall::readSome() {
  if (armed_ == Armed::None) {
    // Without a first-bytes limit of its own (a whole answer, most streams), the whole answer's
    // deadline is armed once, not re-armed after the first piece.
    conn_->deadline->set(first_body_deadline_);
    armed_ = first_body_deadline_ < deadline_ ? Armed::FirstBytes : Armed::Whole;
  }
  for (;;) {
    std::size_t written = 0;
    switch (reader_.parseBody(conn_->buffer, conn_->body, written)) {
      case ResponseReader::Step::Body:
        if (armed_ == Armed::FirstBytes) {
          conn_->deadline->set(deadline_);
          armed_ = Armed::Whole;
        }
        co_return std::string_view(conn_->body.data(), written);
      case ResponseReader::Step::Complete:
        co_return std::string_view{};
      case ResponseReader::Step::NeedMore:
        break;
      default:
        co_return readerFailure();
    }
    auto [ec, n] = co_await conn_->readMore();
    if (isEof(ec)) {
      if (reader_.finishAtEof() == ResponseReader::Step::Complete) {
        co_return std::string_view{};
      }
      co_return readerFailure();
    }
    if (ec) {
      co_return readFailure(ec, armed_ == Armed::FirstBytes ? "before the first bytes of its answer"
                                                            : "while sending its answer");
    }
  }
}

asio::awaitable<void> HttpCall::finish(std::chrono::milliseconds budget) {
  if (reader_.complete()) {
    co_return;
  }
  armed_ = Armed::Whole;
  conn_->deadline->set(std::min(deadline_, Clock::now() + budget));
  for (;;) {
    auto piece = co_await readSome();
    if (!piece || piece->empty()) {
      co_return;
    }
  }
}

asio::awaitable<Result<std::vector<tcp::endpoint>>> Pool::lookUp(const config::Provider& p,
                                                                 Clock::time_point deadline) {
  const auto& url = p.api_base;
  asio::steady_timer lookup_deadline(ioc_, deadline);
  // Past kMaxLookupsInFlight, an attempt waits for a lookup to end (a burst of new connections
  // to a host by name), looking again after 1 ms, then 2, 4, up to 32, within its deadline.
  for (auto pause = std::chrono::milliseconds(1); lookups_in_flight.load() >= kMaxLookupsInFlight;
       pause = std::min(pause * 2, std::chrono::milliseconds(32))) {
    if (Clock::now() >= deadline) {
      co_return timedOut(p, "while waiting for another name lookup to end");
    }
    lookup_deadline.expires_at(std::min(deadline, Clock::now() + pause));
    co_await lookup_deadline.async_wait(kUseTuple);
  }
  lookup_deadline.expires_at(deadline);
  auto lookup = std::make_shared<NameLookup>();
  lookup->timer = &lookup_deadline;
  const StopWaiting stop_waiting(*lookup);
  startLookup(lookup, ioc_.get_executor(), url.host, url.port);
  co_await lookup_deadline.async_wait(kUseTuple);
  const std::lock_guard lock(lookup->mu);
  if (!lookup->done) {
    co_return timedOut(p, "while resolving its host name");
  }
  if (lookup->status != 0 || lookup->endpoints.empty()) {
    co_return Error{ErrorKind::UpstreamUnavailable,
                    "cannot reach upstream provider '" + p.name + "': cannot resolve its host (" +
                        std::string(::gai_strerror(lookup->status)) + ")",
                    ""};
  }
  co_return std::move(lookup->endpoints);
}

asio::awaitable<Result<std::unique_ptr<Connection>>> Pool::connect(
    const config::Provider& p, Clock::time_point request_deadline) {
  auto conn = std::make_unique<Connection>(live_);
  conn->key = poolKey(p);
  const auto& url = p.api_base;
  if (url.tls) {
    conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(ioc_, tlsContext());
  } else {
    conn->plain = std::make_unique<beast::tcp_stream>(ioc_);
  }
  // The connect timeout covers the name lookup too, which has no deadline of its own.
  const auto deadline = std::min(Clock::now() + p.connect_timeout, request_deadline);
  std::vector<tcp::endpoint> endpoints;
  if (const auto address = addressEndpoint(url)) {
    endpoints.push_back(*address);
  } else {
    auto found = co_await lookUp(p, deadline);
    if (!found) {
      co_return std::move(found).error();
    }
    endpoints = std::move(*found);
  }
  conn->tcp().expires_at(deadline);
  auto [cec, ep] = co_await conn->tcp().async_connect(endpoints, kUseTuple);
  if (cec == beast::error::timeout) {
    co_return timedOut(p, "while connecting");
  }
  if (cec) {
    co_return unavailable(p, cec);
  }
  beast::error_code ignored;
  conn->tcp().socket().set_option(tcp::no_delay(true), ignored);
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
  conn->tcp().expires_never();  // Connected: each call's deadline is its own from here.
  conn->deadline.emplace(conn->tcp().socket());
  co_return std::move(conn);
}

/// Writes `buffers` on the connection, plain or TLS.
template <class Buffers>
asio::awaitable<beast::error_code> send(Connection& conn, const Buffers& buffers) {
  if (conn.plain) {
    auto [ec, n] = co_await writeNow(*conn.plain, buffers);
    co_return conn.timedOut(ec);
  }
  auto [ec, n] = co_await asio::async_write(*conn.tls, buffers, kUseTuple);
  co_return conn.timedOut(ec);
}

/// Writes an upload's byte range piece by piece (never whole in memory), then its trailer.
asio::awaitable<beast::error_code> sendAttachment(Connection& conn,
                                                  const UpstreamRequest::Attachment& a) {
  std::vector<char> piece(kAttachmentPieceBytes);
  for (std::size_t done = 0; done < a.size;) {
    const std::size_t want = std::min(piece.size(), a.size - done);
    auto n = a.source->read(a.offset + done, std::span<char>(piece.data(), want));
    if (!n || *n == 0) {
      co_return beast::error_code(asio::error::broken_pipe);
    }
    if (auto ec = co_await send(conn, asio::buffer(piece.data(), *n))) {
      co_return ec;
    }
    done += *n;
  }
  co_return co_await send(conn, asio::buffer(a.trailer));
}

asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> Pool::start(const config::Provider& p,
                                                                   UpstreamRequest r) {
  if (closed_) {
    co_return shuttingDown();
  }
  const auto started = Clock::now();
  const auto deadline = std::min(started + p.total_timeout, r.deadline);
  if (r.signer != nullptr) {
    std::string host;
    appendHost(host, p.api_base);
    if (auto signed_ = r.signer->sign(r, host, std::chrono::system_clock::now()); !signed_) {
      co_return std::move(signed_).error();
    }
  }
  const std::string head = requestHead(p, r);
  const std::array<asio::const_buffer, 2> request{asio::buffer(head), asio::buffer(r.body)};

  // A pooled connection that fails while the request is written was closed by the upstream
  // before it could have received the request, so that request is sent again on a fresh
  // connection. Once written, it is never sent twice: the upstream may have acted on it.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<Connection> conn =
        attempt == 0 ? take(poolKey(p), p.pool_idle_timeout) : nullptr;
    const bool reused = conn != nullptr;
    if (!conn) {
      auto fresh = co_await connect(p, deadline);
      if (!fresh) {
        co_return closed_ ? shuttingDown() : std::move(fresh).error();
      }
      conn = std::move(fresh).value();
    }
    const UpstreamCall::Connected connected{Clock::now(), reused};
    conn->deadline->set(std::min(started + p.first_byte_timeout, deadline));
    beast::error_code wec = co_await send(*conn, request);
    if (!wec && r.attachment) {
      wec = co_await sendAttachment(*conn, *r.attachment);
    }
    if (wec && reused && wec != beast::error::timeout && !closed_) {
      continue;
    }
    if (wec) {
      co_return closed_              ? shuttingDown()
      : wec == beast::error::timeout ? timedOut(p, "while receiving the request")
                                     : unavailable(p, wec);
    }
    auto call = std::make_unique<HttpCall>(*this, std::move(conn), connected, p, deadline,
                                           r.first_body_deadline);
    if (auto ok = co_await call->readHead(); !ok) {
      co_return std::move(ok).error();
    }
    co_return std::unique_ptr<UpstreamCall>(std::move(call));
  }
  co_return Error{ErrorKind::UpstreamUnavailable,
                  "upstream provider '" + p.name + "' closed the connection", ""};
}

}  // namespace

std::unique_ptr<UpstreamPool> makeUpstreamPool(asio::io_context& ioc) {
  return std::make_unique<Pool>(ioc);
}

}  // namespace tollgate::net
