#include "net/session.hpp"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>

#include "core/address.hpp"
#include "core/ids.hpp"
#include "core/trace_context.hpp"
#include "net/http_readers.hpp"
#include "net/lazy_deadline.hpp"
#include "net/write_now.hpp"

namespace tollgate::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kFirstReadBytes = 4096;
constexpr std::size_t kReadBytes = 16 * 1024;
constexpr auto kWriteTimeout = std::chrono::seconds(60);
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr unsigned kHttp11 = 11;
/// Logged when the client hung up before the answer was complete (nginx's convention).
constexpr int kClientClosedRequest = 499;
constexpr std::string_view kLastChunk = "0\r\n\r\n";

/// The request's headers, seen through the handler's interface.
class FieldHeaders final : public http::Headers {
 public:
  explicit FieldHeaders(const HeadFields& fields) : fields_(fields) {}
  std::string_view get(std::string_view name) const override { return fields_.find(name); }

 private:
  const HeadFields& fields_;
};

/// The exchange's trace: the caller's when it sent one valid traceparent (two are invalid), its
/// tracestate lines joined; else a new one, sampled at [traces] sample_ratio. One pass over the
/// fields, by their codes.
trace::Context startTrace(const HeadFields& fields, double sample_ratio) {
  std::size_t parents = 0;
  std::string_view parent;
  bool state = false;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const HeadFields::Entry f = fields[i];
    if (f.code == http1::Field::Traceparent) {
      parent = parents++ == 0 ? f.value : parent;
    } else if (f.code == http1::Field::Tracestate) {
      state = true;
    }
  }
  const bool one = parents == 1;
  return trace::begin(one ? parent : std::string_view(),
                      one && state ? fields.joined("tracestate") : std::string(), sample_ratio);
}

/// Writes responses on the client's connection; counts bytes and remembers a failed write.
class ConnectionWriter final : public http::ResponseWriter {
 public:
  /// `head_only` for a HEAD request: the head GET would get, and no body (RFC 9110 §9.3.2).
  ConnectionWriter(beast::tcp_stream& stream, const exchange::RequestContext& ctx,
                   exchange::Observer& observer, unsigned version, bool keep_alive, bool head_only)
      : stream_(stream),
        observer_(observer),
        request_id_(ctx.request_id),
        version_(version),
        keep_alive_(keep_alive),
        head_only_(head_only) {}

  asio::awaitable<bool> send(http::Response r) override {
    decorate(r);
    status_ = r.status;
    const std::string head = http::responseHead(
        r, {version_, keep_alive_, http::Framing::Length, r.body.size(), request_id_});
    co_return co_await put(asio::buffer(head),
                           asio::buffer(r.body.data(), head_only_ ? 0 : r.body.size()));
  }

  ~ConnectionWriter() override {
    if (streaming_) {
      observer_.streams(-1);
    }
  }
  ConnectionWriter(const ConnectionWriter&) = delete;
  ConnectionWriter& operator=(const ConnectionWriter&) = delete;

  asio::awaitable<bool> beginStream(http::Response r) override {
    if (!streaming_) {
      streaming_ = true;
      observer_.streams(1);
    }
    decorate(r);
    status_ = r.status;
    // HTTP/1.0 has no chunks: the body ends when the connection closes.
    framing_ = version_ >= kHttp11 ? http::Framing::Chunked : http::Framing::UntilClose;
    keep_alive_ = keep_alive_ && framing_ == http::Framing::Chunked;
    pending_head_ = http::responseHead(r, {version_, keep_alive_, framing_, 0, request_id_});
    co_return ok_;
  }

  asio::awaitable<bool> flush() override {
    if (pending_head_.empty()) {
      co_return ok_;
    }
    const std::string head = std::move(pending_head_);
    pending_head_.clear();
    co_return co_await put(asio::buffer(head));
  }

  asio::awaitable<bool> write(std::string_view piece) override {
    if (piece.empty()) {
      co_return co_await flush();
    }
    co_return co_await sendPiece(piece, false);
  }

  asio::awaitable<bool> endStream(std::string_view last) override {
    co_return co_await sendPiece(last, true);
  }

  bool ok() const override { return ok_; }
  void markGone() { ok_ = false; }
  bool keepAlive() const { return keep_alive_; }
  /// The status of the response sent (or begun); 0 before.
  int status() const { return status_; }
  std::size_t bytesOut() const { return bytes_out_; }

 private:
  /// Sends the held-back head (if any), `piece` in the stream's framing, and with `last` the
  /// end of the body: one gather write.
  asio::awaitable<bool> sendPiece(std::string_view piece, bool last) {
    const std::string head = std::move(pending_head_);
    pending_head_.clear();
    if (framing_ != http::Framing::Chunked) {
      co_return co_await put(asio::buffer(head), asio::buffer(piece));
    }
    char size_line[24];
    const int n =
        piece.empty() ? 0 : std::snprintf(size_line, sizeof(size_line), "%zx\r\n", piece.size());
    const std::string_view trailer = piece.empty() ? "" : "\r\n";
    co_return co_await put(asio::buffer(head), asio::buffer(size_line, static_cast<std::size_t>(n)),
                           asio::buffer(piece), asio::buffer(trailer.data(), trailer.size()),
                           asio::buffer(kLastChunk.data(), last ? kLastChunk.size() : 0));
  }

  /// Writes the pieces in one gather write.
  asio::awaitable<bool> put(asio::const_buffer a, asio::const_buffer b = {},
                            asio::const_buffer c = {}, asio::const_buffer d = {},
                            asio::const_buffer e = {}) {
    if (!ok_) {
      co_return false;
    }
    const std::array<asio::const_buffer, 5> buffers{a, b, c, d, e};
    auto [ec, n] = co_await writeNow(stream_, buffers, kWriteTimeout);
    bytes_out_ += n;
    ok_ = !ec;
    co_return ok_;
  }

  beast::tcp_stream& stream_;
  exchange::Observer& observer_;
  std::string_view request_id_;
  unsigned version_;
  bool keep_alive_;
  bool head_only_;
  http::Framing framing_ = http::Framing::Length;
  std::string pending_head_;
  bool ok_ = true;
  int status_ = 0;
  std::size_t bytes_out_ = 0;
  bool streaming_ = false;  ///< A stream began: the observer was told.
};

/// The path and query of a request target, in origin form or absolute form
/// (`http://host/path?q`, RFC 9112 §3.2.2), which a server must accept.
struct Target {
  std::string_view path;
  std::string_view query;
};

Target splitTarget(std::string_view target) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() >= scheme.size() && beast::iequals(target.substr(0, scheme.size()), scheme)) {
      target.remove_prefix(scheme.size());
      const std::size_t path = target.find_first_of("/?");
      target = path == std::string_view::npos ? std::string_view("/") : target.substr(path);
      break;
    }
  }
  const std::size_t qmark = target.find('?');
  Target t{target.substr(0, qmark), {}};
  if (qmark != std::string_view::npos) {
    t.query = target.substr(qmark + 1);
  }
  if (t.path.empty()) {
    t.path = "/";
  }
  return t;
}

/// How reading part of a request ended: read, an error to answer before closing, or the client
/// went away (nothing to answer).
struct ReadResult {
  bool ok = false;
  std::optional<Error> error;
};

/// Parses and reads until `reader` has the head (`want` HeadDone) or the whole request, within
/// `timeout` of the first read it needs, on the connection's `deadline` (which cancels the read
/// and leaves the connection open, so that the client can be told 408). Usually everything
/// arrived with the first read: then no deadline is set and no I/O is done.
asio::awaitable<ReadResult> readPart(beast::tcp_stream& stream, LazyDeadline& deadline,
                                     beast::flat_buffer& buffer, RequestReader& reader,
                                     RequestReader::Step want, std::chrono::milliseconds timeout,
                                     std::string_view part) {
  struct Ended {
    LazyDeadline& deadline;
    ~Ended() { deadline.clear(); }
  } ended{deadline};
  bool set = false;
  for (;;) {
    const RequestReader::Step step = reader.parse(buffer);
    if (step == RequestReader::Step::Failed) {
      co_return ReadResult{false, reader.error()};
    }
    if (step == want || step == RequestReader::Step::Complete) {
      co_return ReadResult{true, std::nullopt};
    }
    if (step == RequestReader::Step::HeadDone) {
      continue;  // Reading the whole request: go on with the body.
    }
    if (!set) {
      deadline.set(Clock::now() + timeout);
      set = true;
    }
    // A body is read in pieces as large as the bound allows (the parser consumes each whole):
    // an upload then costs half the system calls it would in pieces of kReadBytes.
    const std::size_t bound = readRoom(buffer, reader.bufferLimit());
    const std::size_t room = reader.headDone() ? bound : std::min(kReadBytes, bound);
    auto [ec, n] = co_await stream.socket().async_read_some(buffer.prepare(room), kUseTuple);
    buffer.commit(n);
    if (deadline.expired()) {
      co_return ReadResult{false,
                           Error{ErrorKind::RequestTimeout,
                                 "request " + std::string(part) + " not received in time", ""}};
    }
    if (ec) {
      co_return ReadResult{};  // The client closed or reset the connection.
    }
  }
}

/// Closes a connection after its last answer. Lingering: a client still sending its body would
/// get a reset, and could lose our answer, if we closed with unread bytes, so what arrives is
/// discarded for a bounded time.
asio::awaitable<void> lingeringClose(beast::tcp_stream& stream) {
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.expires_after(kLingerTime);
  std::array<char, kFirstReadBytes> scratch;
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(scratch), kUseTuple);
    if (ec) {
      break;
    }
  }
}

/// Cancels a handler whose client hung up. While the handler runs, a wait for the socket to turn
/// readable is armed; if it finds the connection closed or reset (or closed under it at shutdown),
/// it cancels the session's coroutine, and with it the handler's upstream call. Bytes to read
/// instead (a pipelined request) leave the handler be. One per connection, and a plain callback:
/// racing a coroutine against the handler (`||`) spawned two coroutines and a parallel group for
/// every request, 5 % of the open path's instructions.
class HangUpWatch {
 public:
  asio::cancellation_slot slot() { return signal_.slot(); }

  /// Arms the watch for one run of a handler.
  void arm(const std::shared_ptr<HangUpWatch>& self, tcp::socket& socket) {
    armed_ = ++runs_;
    gone_ = false;
    socket.async_wait(tcp::socket::wait_read,
                      [self, &socket, run = runs_](const boost::system::error_code& ec) {
                        self->fired(socket, run, ec);
                      });
  }

  /// That run ended: a wait that completes later (with the next request's bytes, or as the
  /// socket closes) is ignored.
  void disarm() { armed_ = 0; }

  bool gone() const { return gone_; }

 private:
  void fired(tcp::socket& socket, std::uint64_t run, const boost::system::error_code& ec) {
    if (armed_ != run) {
      return;  // Not this run's: its socket may be gone.
    }
    beast::error_code avail_ec;
    if (!ec && socket.available(avail_ec) > 0 && !avail_ec) {
      return;
    }
    gone_ = true;
    signal_.emit(asio::cancellation_type::terminal);
  }

  asio::cancellation_signal signal_;
  std::uint64_t runs_ = 0;
  std::uint64_t armed_ = 0;  ///< The run armed, 0: none.
  bool gone_ = false;
};

/// Keeps a socket in one of the worker's registries while it lives.
class Registered {
 public:
  Registered(std::unordered_set<tcp::socket*>& set, tcp::socket& s) : set_(set), s_(s) {
    set_.insert(&s_);
  }
  ~Registered() { set_.erase(&s_); }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;

 private:
  std::unordered_set<tcp::socket*>& set_;
  tcp::socket& s_;
};

/// Tells the observer that a client connection is open while it lives.
class OpenConnection {
 public:
  explicit OpenConnection(exchange::Observer& observer) : observer_(observer) {
    observer_.connections(1);
  }
  ~OpenConnection() { observer_.connections(-1); }
  OpenConnection(const OpenConnection&) = delete;
  OpenConnection& operator=(const OpenConnection&) = delete;

 private:
  exchange::Observer& observer_;
};

/// The one end of every exchange: records what the client effectively saw (an in-stream error a
/// handler recorded, else the status sent; 499 when the client left) and tells the observer.
void ended(SessionShared& shared, exchange::RequestContext& ctx, const ConnectionWriter& out) {
  ctx.status = !out.ok() ? kClientClosedRequest : ctx.status != 0 ? ctx.status : out.status();
  ctx.bytes_out = out.bytesOut();
  shared.observer.ended(ctx);
}

/// Answers a request refused before its handler ran, then ends its exchange.
asio::awaitable<void> refuse(SessionShared& shared, exchange::RequestContext& ctx,
                             ConnectionWriter& out, http::Response response) {
  co_await out.send(std::move(response));
  ended(shared, ctx, out);
}

/// Serves one accepted connection until it closes, fails or shutdown ends it. `watch`'s slot is
/// the coroutine's own cancellation slot.
asio::awaitable<void> session(SessionShared& shared, tcp::socket socket,
                              std::shared_ptr<HangUpWatch> watch) {
  // The connection's limits are those of the configuration it was accepted under.
  const std::shared_ptr<const config::Config> accepted = shared.live.pin();
  const config::Gateway& g = accepted->gateway;
  beast::tcp_stream stream(std::move(socket));
  const Registered open(shared.open, stream.socket());
  const OpenConnection counted(shared.observer);
  beast::error_code no_peer;
  const auto remote = stream.socket().remote_endpoint(no_peer);
  const std::string peer = no_peer ? std::string() : remote.address().to_string();
  beast::flat_buffer buffer;
  // The deadline of each wait for the client: for its next request (the idle timeout, which ends
  // the connection), for the rest of a head, for a body.
  LazyDeadline deadline(stream.socket());
  for (;;) {
    if (shared.draining.load()) {
      co_return;
    }
    if (buffer.size() == 0) {
      // Waiting for the next request: only the idle timeout applies, and shutdown may end it.
      const Registered idle(shared.idle, stream.socket());
      deadline.set(Clock::now() + g.idle_timeout);
      auto [ec, n] =
          co_await stream.socket().async_read_some(buffer.prepare(kFirstReadBytes), kUseTuple);
      deadline.clear();
      if (ec) {
        co_return;
      }
      buffer.commit(n);
    }
    exchange::RequestContext ctx(shared.live.pin(), ids::uuidV7());
    RequestReader reader(g.max_header_bytes, shared.router.maxBodyLimit());
    const ReadResult head =
        co_await readPart(stream, deadline, buffer, reader, RequestReader::Step::HeadDone,
                          g.header_timeout, "headers");
    const double sample_ratio = ctx.config.traces.sample_ratio;
    if (!head.ok) {
      if (head.error) {
        ctx.trace = reader.headDone() ? startTrace(reader.request().fields(), sample_ratio)
                                      : trace::begin({}, {}, sample_ratio);
        ConnectionWriter closing(stream, ctx, shared.observer, kHttp11, false, false);
        if (reader.headDone()) {
          ctx.method = reader.request().method();
          ctx.path = splitTarget(reader.request().target()).path;
        }
        co_await refuse(shared, ctx, closing, http::Response::error(*head.error));
        co_await lingeringClose(stream);
      }
      co_return;
    }

    RequestParser& req = reader.request();
    const HeadFields& fields = req.fields();
    ctx.trace = startTrace(fields, sample_ratio);
    const Target target = splitTarget(req.target());
    const http::Method method = http::parseMethod(req.method());
    const bool head_only = method == http::Method::Head;
    const bool keep_alive = req.keepAlive() && !shared.draining.load();
    ctx.method = req.method();
    ctx.path = target.path;
    http::Routing routing =
        shared.router.route(method, target.path, fields.find(http1::Field::ContentType));
    if (routing.route != nullptr) {
      ctx.route = routing.route->pattern;
      // Who is calling is settled before the body is read: a stranger cannot make us buffer it.
      if (auto refused = shared.router.admit(
              *routing.route, fields.find(http1::Field::Authorization), ctx.caller)) {
        ctx.error_code = errorSpec(refused->kind).code;
        routing.route = nullptr;
        routing.refusal = http::Response::error(*refused);
      }
    }
    if (routing.route != nullptr && !reader.limitBody(routing.route->body_limit)) {
      routing.route = nullptr;
      routing.refusal = http::Response::error(reader.error());
    }
    if (routing.route != nullptr) {
      req.body().limitMemory(routing.route->memory_limit);
    }
    // Whether the body is already here decides between 100 Continue, keep-alive and closing.
    const bool body_pending = reader.parse(buffer) != RequestReader::Step::Complete;
    if (routing.route == nullptr) {
      // Answered without reading the body: the connection stays usable only if none is pending.
      ConnectionWriter out(stream, ctx, shared.observer, req.version(), keep_alive && !body_pending,
                           head_only);
      co_await refuse(shared, ctx, out, std::move(routing.refusal));
      if (body_pending) {
        co_await lingeringClose(stream);
        co_return;
      }
      if (!out.ok() || !out.keepAlive()) {
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        co_return;
      }
      continue;
    }
    if (body_pending && req.version() >= kHttp11 &&
        beast::iequals(fields.find(http1::Field::Expect), "100-continue")) {
      // Only now that the request may go on (RFC 9110 §10.1.1), and never to HTTP/1.0.
      constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      co_await writeNow(stream, asio::buffer(kContinue), kWriteTimeout);
    }
    const ReadResult body = co_await readPart(
        stream, deadline, buffer, reader, RequestReader::Step::Complete, g.body_timeout, "body");
    if (!body.ok) {
      if (body.error) {
        ConnectionWriter closing(stream, ctx, shared.observer, req.version(), false, head_only);
        co_await refuse(shared, ctx, closing, http::Response::error(*body.error));
        co_await lingeringClose(stream);
      }
      co_return;
    }
    ctx.bytes_in = req.body().size();
    const FieldHeaders headers(fields);
    const std::string source =
        g.trusted_proxies.empty()
            ? peer
            : address::requestSource(peer, fields.joined("X-Forwarded-For"), g.trusted_proxies);
    http::Request request{method,         target.path, target.query,
                          req.version(),  &headers,    &req.body().memory(),
                          routing.params, &req.body(), source};
    ConnectionWriter out(stream, ctx, shared.observer, req.version(), keep_alive, head_only);
    if (routing.route->idempotent && !request.header("Idempotency-Key").empty()) {
      // Its answer is kept for the client's retry: it runs to its end even if the client leaves.
      co_await routing.route->handler(ctx, request, out);
    } else {
      // A client that hangs up cancels the handler, and with it any upstream call.
      watch->arm(watch, stream.socket());
      std::exception_ptr failed;
      try {
        co_await routing.route->handler(ctx, request, out);
      } catch (...) {
        failed = std::current_exception();
      }
      watch->disarm();
      if (watch->gone()) {
        out.markGone();  // What the cancelled handler threw, if anything, is its cancellation.
      } else if (failed) {
        std::rethrow_exception(failed);
      }
    }
    ended(shared, ctx, out);
    if (!out.ok() || !out.keepAlive()) {
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      co_return;
    }
  }
}

}  // namespace

void spawnSession(SessionShared& shared, tcp::socket socket, void (*failed)(std::exception_ptr)) {
  auto watch = std::make_shared<HangUpWatch>();
  const asio::cancellation_slot slot = watch->slot();
  const auto executor = socket.get_executor();
  asio::co_spawn(executor, session(shared, std::move(socket), std::move(watch)),
                 asio::bind_cancellation_slot(slot, failed));
}

}  // namespace tollgate::net
