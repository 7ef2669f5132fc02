#include "net/http_server.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/json.hpp"
#include "core/text.hpp"
#include "net/access_log.hpp"
#include "net/chat_relay.hpp"
#include "net/http_readers.hpp"
#include "openai/models.hpp"
#include "providers/secret_redactor.hpp"

namespace tollgate::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kFirstReadBytes = 4096;
constexpr std::size_t kReadBytes = 16 * 1024;
constexpr auto kWriteTimeout = std::chrono::seconds(60);
constexpr auto kLingerTime = std::chrono::seconds(2);
/// After the shutdown deadline, first the upstream calls are closed (their clients get an error
/// event or answer), then, after this grace, the client connections.
constexpr auto kCloseGrace = std::chrono::milliseconds(200);
constexpr auto kFinalWait = std::chrono::seconds(2);
/// How long the acceptor waits before trying again when the process is out of descriptors.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);
constexpr std::size_t kResponseHeadReserve = 160;
constexpr unsigned kHttp10 = 10;
constexpr unsigned kHttp11 = 11;
/// Logged when the client hung up before the answer was complete (nginx's convention).
constexpr int kClientClosedRequest = 499;

/// State one worker thread owns: its io_context, upstream pool, sessions and access log.
/// Members are destroyed in reverse order: the io_context (and with it every coroutine frame,
/// which may hold upstream calls and session guards) goes before the pool and the session sets.
struct Worker {
  Worker(const config::Config& c, const providers::SecretRedactor& r, std::atomic<bool>& d)
      : config(c), redactor(r), draining(d) {
    upstream = makeHttpUpstreamClient(ioc);
  }
  ~Worker() {
    upstream->close();  // Idle pooled sockets go while their io_context still exists.
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Closes every client connection: what is in flight ends at once.
  void closeClients() {
    beast::error_code ignored;
    for (beast::tcp_stream* s : open) {
      s->socket().close(ignored);
    }
  }

  const config::Config& config;
  const providers::SecretRedactor& redactor;
  std::atomic<bool>& draining;
  std::unordered_set<beast::tcp_stream*> open;  ///< Every client connection.
  std::unordered_set<beast::tcp_stream*> idle;  ///< Those waiting for their next request.
  std::unique_ptr<UpstreamClient> upstream;
  asio::io_context ioc{1};
  AccessLog access_log{ioc};
};

struct Reply {
  int status = 200;
  std::string body;
  std::string_view allow;  ///< For 405.
};

Reply errorReply(const Error& e) { return {e.status(), errorBody(e), {}}; }

/// The status line and headers of a response whose body has `length` bytes. Written by hand:
/// Beast's serializer costs several times more on this hot path.
std::string responseHead(int status, unsigned version, std::string_view content_type,
                         std::size_t length, bool keep_alive, std::string_view allow) {
  std::string head;
  head.reserve(kResponseHeadReserve);
  head.append(version == kHttp10 ? "HTTP/1.0 " : "HTTP/1.1 ")
      .append(std::to_string(status))
      .append(" ")
      .append(http::obsolete_reason(static_cast<http::status>(status)))
      .append("\r\nContent-Type: ")
      .append(content_type)
      .append("\r\nContent-Length: ")
      .append(std::to_string(length));
  if (!allow.empty()) {
    head.append("\r\nAllow: ").append(allow);
  }
  if (version >= kHttp11 && !keep_alive) {
    head.append("\r\nConnection: close");
  } else if (version == kHttp10 && keep_alive) {
    head.append("\r\nConnection: keep-alive");
  }
  head.append("\r\n\r\n");
  return head;
}

/// The client side of a chat exchange over one HTTP/1.x connection.
class BeastClientStream final : public ClientStream {
 public:
  /// `head_only` for a HEAD request: the head GET would get, and no body (RFC 9110 §9.3.2).
  BeastClientStream(beast::tcp_stream& stream, unsigned version, bool keep_alive, bool head_only)
      : stream_(stream), version_(version), keep_alive_(keep_alive), head_only_(head_only) {}

  asio::awaitable<bool> send(int status, std::string_view content_type, std::string body) override {
    co_return co_await send(status, content_type, std::move(body), {});
  }

  /// `allow` is the Allow header of a 405; empty for none.
  asio::awaitable<bool> send(int status, std::string_view content_type, std::string body,
                             std::string_view allow) {
    const std::string head =
        responseHead(status, version_, content_type, body.size(), keep_alive_, allow);
    const std::array<asio::const_buffer, 2> buffers{
        asio::buffer(head), asio::buffer(body.data(), head_only_ ? 0 : body.size())};
    stream_.expires_after(kWriteTimeout);
    auto [ec, n] = co_await asio::async_write(stream_, buffers, kUseTuple);
    bytes_out_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
  }

  asio::awaitable<bool> beginEventStream() override {
    http::response<http::empty_body> res{http::status::ok, version_};
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    res.set("X-Accel-Buffering", "no");
    chunked_ = version_ >= 11;
    if (chunked_) {
      res.chunked(true);
      res.keep_alive(keep_alive_);
    } else {
      res.keep_alive(false);  // HTTP/1.0: the body ends when the connection closes.
      keep_alive_ = false;
    }
    http::response_serializer<http::empty_body> sr{res};
    stream_.expires_after(kWriteTimeout);
    auto [ec, n] = co_await http::async_write_header(stream_, sr, kUseTuple);
    bytes_out_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
  }

  asio::awaitable<bool> sendEvents(std::string events) override {
    stream_.expires_after(kWriteTimeout);
    std::size_t n = 0;
    beast::error_code ec;
    if (chunked_) {
      std::tie(ec, n) =
          co_await asio::async_write(stream_, http::make_chunk(asio::buffer(events)), kUseTuple);
    } else {
      std::tie(ec, n) = co_await asio::async_write(stream_, asio::buffer(events), kUseTuple);
    }
    bytes_out_ += n;
    ok_ = ok_ && !ec;
    co_return ok_;
  }

  asio::awaitable<bool> endEventStream() override {
    if (chunked_) {
      stream_.expires_after(kWriteTimeout);
      auto [ec, n] = co_await asio::async_write(stream_, http::make_chunk_last(), kUseTuple);
      bytes_out_ += n;
      ok_ = ok_ && !ec;
    }
    co_return ok_;
  }

  bool ok() const { return ok_; }
  void markGone() { ok_ = false; }
  bool keepAlive() const { return keep_alive_; }
  std::size_t bytesOut() const { return bytes_out_; }

 private:
  beast::tcp_stream& stream_;
  unsigned version_;
  bool keep_alive_;
  bool head_only_;
  bool chunked_ = false;
  bool ok_ = true;
  std::size_t bytes_out_ = 0;
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

enum class Endpoint { Health, Ready, Models, ChatCompletions };

struct Route {
  std::string_view path;
  http::verb method;
  std::string_view allow;
  Endpoint endpoint;
};

constexpr Route kRoutes[] = {
    {"/health", http::verb::get, "GET, HEAD", Endpoint::Health},
    {"/ready", http::verb::get, "GET, HEAD", Endpoint::Ready},
    {"/v1/models", http::verb::get, "GET, HEAD", Endpoint::Models},
    {"/v1/chat/completions", http::verb::post, "POST", Endpoint::ChatCompletions},
};

/// The endpoint a request head asks for, or the error that answers it: decided before the body
/// is read (and before a 100 Continue is sent). HEAD is served as GET's head where GET exists.
Result<Endpoint> routeHead(http::verb method, std::string_view path,
                           std::string_view content_type) {
  for (const Route& r : kRoutes) {
    if (r.path != path) {
      continue;
    }
    const bool allowed =
        method == r.method || (method == http::verb::head && r.method == http::verb::get);
    if (!allowed) {
      return Error{ErrorKind::MethodNotAllowed,
                   std::string(path) + " accepts " + std::string(r.allow) + " only", ""};
    }
    if (r.method == http::verb::post && !text::isMediaType(content_type, "application/json")) {
      return Error{ErrorKind::UnsupportedMediaType, "Content-Type must be application/json", ""};
    }
    return r.endpoint;
  }
  return Error{ErrorKind::RouteNotFound,
               "no endpoint " + text::printable(path) +
                   " (the base URL must end in /v1, e.g. http://host:port/v1)",
               ""};
}

std::string_view allowOf(std::string_view path) {
  for (const Route& r : kRoutes) {
    if (r.path == path) {
      return r.allow;
    }
  }
  return {};
}

/// The answer of every endpoint but chat completions, which needs the stream.
Reply answer(const Worker& w, Endpoint endpoint, std::string_view query) {
  switch (endpoint) {
    case Endpoint::Health:
      return Reply{200, R"({"status":"ok"})", {}};
    case Endpoint::Ready:
      if (w.draining.load()) {
        return errorReply(Error{ErrorKind::ServiceUnavailable, "shutting down", ""});
      }
      return Reply{200, R"({"status":"ready"})", {}};
    case Endpoint::Models: {
      auto models = openai::listModels(w.config, query);
      return models ? Reply{200, std::move(models).value(), {}} : errorReply(models.error());
    }
    case Endpoint::ChatCompletions:
      break;
  }
  return errorReply(Error{ErrorKind::Internal, "no answer for this endpoint", ""});
}

/// Cancels the stream's pending reads when it fires. Unlike the stream's own timeout, which
/// closes the socket, this leaves the connection open so the client can be told 408.
class ReadDeadline {
 public:
  ReadDeadline(beast::tcp_stream& stream, std::chrono::milliseconds timeout)
      : timer_(stream.get_executor()), state_(std::make_shared<State>()) {
    stream.expires_never();
    timer_.expires_after(timeout);
    timer_.async_wait([state = state_, &stream](const beast::error_code& ec) {
      if (!ec && !state->done) {
        state->fired = true;
        beast::error_code ignored;
        stream.socket().cancel(ignored);
      }
    });
  }
  ~ReadDeadline() {
    state_->done = true;
    timer_.cancel();
  }
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;

  bool fired() const { return state_->fired; }

 private:
  struct State {
    bool fired = false;
    bool done = false;  ///< Set when the guarded read is over; the handler must not touch it.
  };
  asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

/// How reading part of a request ended: read, an error to answer before closing, or the client
/// went away (nothing to answer).
struct ReadResult {
  bool ok = false;
  std::optional<Error> error;
};

/// Parses and reads until `reader` has the head (`want` HeadDone) or the whole request, within
/// `timeout` of the first read it needs. Usually everything arrived with the first read: then no
/// timer is armed and no I/O is done.
asio::awaitable<ReadResult> readPart(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                     RequestReader& reader, RequestReader::Step want,
                                     std::chrono::milliseconds timeout, std::string_view part) {
  std::optional<ReadDeadline> deadline;
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
    if (!deadline) {
      deadline.emplace(stream, timeout);
    }
    const std::size_t room = std::min(kReadBytes, readRoom(buffer, reader.bufferLimit()));
    auto [ec, n] = co_await stream.async_read_some(buffer.prepare(room), kUseTuple);
    buffer.commit(n);
    if (deadline->fired()) {
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

/// Completes when the client closes its side of the connection. Bytes of a pipelined next
/// request are no sign of leaving: then it waits until cancelled.
asio::awaitable<void> clientGone(tcp::socket& socket) {
  auto [ec] = co_await socket.async_wait(tcp::socket::wait_read, kUseTuple);
  beast::error_code avail_ec;
  if (!ec && socket.available(avail_ec) > 0 && !avail_ec) {
    asio::steady_timer forever(socket.get_executor(), Clock::time_point::max());
    co_await forever.async_wait(kUseTuple);
  }
}

/// Keeps a stream in one of the worker's registries while it lives.
class Registered {
 public:
  Registered(std::unordered_set<beast::tcp_stream*>& set, beast::tcp_stream& s) : set_(set), s_(s) {
    set_.insert(&s_);
  }
  ~Registered() { set_.erase(&s_); }
  Registered(const Registered&) = delete;
  Registered& operator=(const Registered&) = delete;

 private:
  std::unordered_set<beast::tcp_stream*>& set_;
  beast::tcp_stream& s_;
};

/// One access-log line, whatever way the exchange ended.
void logExchange(Worker& w, AccessLogEntry& log, Clock::time_point started,
                 const BeastClientStream& client) {
  log.bytes_out += client.bytesOut();
  log.total = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  w.access_log.write(log);
}

asio::awaitable<void> session(Worker& w, tcp::socket socket) {
  const config::Gateway& g = w.config.gateway;
  beast::tcp_stream stream(std::move(socket));
  const Registered open(w.open, stream);
  beast::flat_buffer buffer;
  for (;;) {
    if (w.draining.load()) {
      co_return;
    }
    if (buffer.size() == 0) {
      // Waiting for the next request: only the idle timeout applies, and shutdown may end it.
      const Registered idle(w.idle, stream);
      stream.expires_after(g.idle_timeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kFirstReadBytes), kUseTuple);
      if (ec) {
        co_return;
      }
      buffer.commit(n);
    }
    const auto started = Clock::now();
    RequestReader reader(g.max_header_bytes, g.max_body_bytes);
    AccessLogEntry log;
    const ReadResult head = co_await readPart(stream, buffer, reader, RequestReader::Step::HeadDone,
                                              g.header_timeout, "headers");
    if (!head.ok) {
      if (head.error) {
        BeastClientStream client(stream, kHttp11, false, false);
        if (reader.headDone()) {
          log.method = reader.message().method_string();
          log.path = splitTarget(reader.message().target()).path;
        }
        log.status = head.error->status();
        co_await client.sendError(*head.error);
        logExchange(w, log, started, client);
        co_await lingeringClose(stream);
      }
      co_return;
    }

    auto& req = reader.message();
    const Target target = splitTarget(req.target());
    const bool head_only = req.method() == http::verb::head;
    const bool keep_alive = req.keep_alive() && !w.draining.load();
    log.method = req.method_string();
    log.path = target.path;
    const Result<Endpoint> endpoint =
        routeHead(req.method(), target.path, req[http::field::content_type]);
    // Whether the body is already here decides between 100 Continue, keep-alive and closing.
    const bool body_pending = reader.parse(buffer) != RequestReader::Step::Complete;
    if (!endpoint) {
      // Answered without reading the body: the connection stays usable only if none is pending.
      BeastClientStream client(stream, req.version(), keep_alive && !body_pending, head_only);
      log.status = endpoint.error().status();
      const std::string_view allow =
          endpoint.error().kind == ErrorKind::MethodNotAllowed ? allowOf(target.path) : "";
      co_await client.send(log.status, "application/json", errorBody(endpoint.error()), allow);
      logExchange(w, log, started, client);
      if (body_pending) {
        co_await lingeringClose(stream);
        co_return;
      }
      if (!client.ok() || !client.keepAlive()) {
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        co_return;
      }
      continue;
    }
    if (body_pending && req.version() >= kHttp11 &&
        beast::iequals(req[http::field::expect], "100-continue")) {
      // Only now that the request may go on (RFC 9110 §10.1.1), and never to HTTP/1.0.
      constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      stream.expires_after(kWriteTimeout);
      co_await asio::async_write(stream, asio::buffer(kContinue), kUseTuple);
    }
    const ReadResult body = co_await readPart(stream, buffer, reader, RequestReader::Step::Complete,
                                              g.body_timeout, "body");
    if (!body.ok) {
      if (body.error) {
        BeastClientStream closing(stream, req.version(), false, head_only);
        log.status = body.error->status();
        co_await closing.sendError(*body.error);
        logExchange(w, log, started, closing);
        co_await lingeringClose(stream);
      }
      co_return;
    }
    log.bytes_in = req.body().size();
    BeastClientStream client(stream, req.version(), keep_alive, head_only);

    if (*endpoint != Endpoint::ChatCompletions) {
      Reply reply = answer(w, *endpoint, target.query);
      log.status = reply.status;
      co_await client.send(reply.status, "application/json", std::move(reply.body), reply.allow);
    } else {
      using namespace asio::experimental::awaitable_operators;
      ChatOutcome outcome;
      // A client that hangs up cancels the relay, and with it the upstream call.
      auto done =
          co_await (relayChat(w.config, *w.upstream, w.redactor, req.body(), client, outcome) ||
                    clientGone(stream.socket()));
      if (done.index() == 1) {
        client.markGone();
      }
      log.status = outcome.status;
      log.model = std::move(outcome.model);
      log.upstream = outcome.upstream;
    }
    if (!client.ok()) {
      log.status = kClientClosedRequest;
    }
    logExchange(w, log, started, client);
    if (!client.ok() || !client.keepAlive()) {
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      co_return;
    }
  }
}

/// One JSON line on stderr for an event that is not an exchange (those go to the access log).
void logEvent(std::string_view level, std::string_view msg, std::string_view detail) {
  json::Writer line;
  line.startObject();
  line.field("level", level);
  line.field("msg", msg);
  line.field("detail", text::printable(detail));
  line.endObject();
  std::fprintf(stderr, "%s\n", line.take().c_str());
}

/// The completion handler of every spawned coroutine: a failure is logged as one JSON line.
void logFailure(std::exception_ptr e) {
  if (!e) {
    return;
  }
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    what = ex.what();
  } catch (...) {
  }
  logEvent("error", "connection handler failed", what);
}

/// Errors of accept() that mean the process or system is out of a resource: retrying at once
/// would spin, so the acceptor backs off.
bool outOfResources(const beast::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == asio::error::no_memory || ec.value() == ENFILE;
}

/// Accepts on the first worker's thread and hands each connection to the workers in turn; the
/// accepted socket already belongs to its worker's io_context.
asio::awaitable<void> acceptLoop(tcp::acceptor& acceptor,
                                 const std::vector<std::unique_ptr<Worker>>& workers) {
  asio::steady_timer backoff(acceptor.get_executor());
  bool starved = false;  // Logged once per episode of running out.
  for (std::size_t next = 0;;) {
    Worker& w = *workers[next % workers.size()];
    auto [ec, socket] = co_await acceptor.async_accept(w.ioc, kUseTuple);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) {
      co_return;
    }
    if (outOfResources(ec)) {
      if (!starved) {
        starved = true;
        logEvent("warn", "cannot accept connections; retrying every 100 ms", ec.message());
      }
      // Open connections are served meanwhile; pending ones wait in the listen backlog.
      backoff.expires_after(kAcceptBackoff);
      co_await backoff.async_wait(kUseTuple);
      continue;
    }
    if (ec) {
      continue;  // E.g. the client reset before we accepted.
    }
    starved = false;
    ++next;
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(w.ioc, session(w, std::move(socket)), logFailure);
  }
}

unsigned workerCount(unsigned configured) {
  if (configured > 0) {
    return configured;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
    return static_cast<unsigned>(CPU_COUNT(&set));
  }
  return std::max(1U, std::thread::hardware_concurrency());
}

/// Binds without SO_REUSEPORT, so a second gateway on the same port fails loudly instead of
/// silently sharing its traffic.
void listen(tcp::acceptor& acceptor, const tcp::endpoint& endpoint) {
  acceptor.open(endpoint.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(endpoint);
  acceptor.listen(asio::socket_base::max_listen_connections);
}

/// Raises the soft limit on open files to the hard limit: each client and upstream connection
/// needs a descriptor, and the default soft limit (1024) is far below what a gateway serves.
void raiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

std::string endpointText(const tcp::endpoint& e) {
  const std::string address = e.address().to_string();
  return (e.address().is_v6() ? "[" + address + "]" : address) + ":" + std::to_string(e.port());
}

}  // namespace

int serve(const config::Config& config) {
  std::signal(SIGPIPE, SIG_IGN);
  raiseOpenFileLimit();
  const config::Gateway& g = config.gateway;
  std::atomic<bool> draining{false};
  const providers::SecretRedactor redactor(config);
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned i = workerCount(g.workers); i > 0; --i) {
    workers.push_back(std::make_unique<Worker>(config, redactor, draining));
  }
  tcp::acceptor acceptor(workers.front()->ioc);
  tcp::endpoint endpoint;
  try {
    listen(acceptor, tcp::endpoint(asio::ip::make_address(g.host), g.port));
    endpoint = acceptor.local_endpoint();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: cannot listen on %s:%u: %s\n", g.host.c_str(),
                 static_cast<unsigned>(g.port), e.what());
    return 1;
  }

  asio::io_context main_ioc{1};
  asio::signal_set signals(main_ioc, SIGINT, SIGTERM);
  signals.async_wait([](const beast::error_code&, int) {});

  std::mutex mu;
  std::condition_variable cv;
  unsigned finished = 0;
  std::vector<std::thread> threads;
  using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<WorkGuard> keep_running;  // Workers wait for connections until shutdown.
  asio::co_spawn(workers.front()->ioc, acceptLoop(acceptor, workers), logFailure);
  for (auto& w : workers) {
    keep_running.emplace_back(w->ioc.get_executor());
    threads.emplace_back([&, worker = w.get()] {
      worker->ioc.run();
      std::lock_guard lock(mu);
      ++finished;
      cv.notify_all();
    });
  }
  std::printf("tollgate listening on %s\n", endpointText(endpoint).c_str());
  std::fflush(stdout);

  main_ioc.run();  // Returns once a signal arrived.
  draining = true;
  asio::post(workers.front()->ioc, [&acceptor] {
    beast::error_code ignored;
    acceptor.close(ignored);
  });
  keep_running.clear();
  for (auto& w : workers) {
    asio::post(w->ioc, [worker = w.get()] {
      beast::error_code ignored;
      for (beast::tcp_stream* s : worker->idle) {
        s->socket().cancel(ignored);
      }
    });
  }
  auto waitFor = [&](auto timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return finished == workers.size(); });
  };
  if (!waitFor(g.shutdown_timeout)) {
    logEvent("warn", "shutdown deadline passed; closing remaining connections", "");
    // Upstream calls first: their clients still get an error event or an error answer.
    for (auto& w : workers) {
      asio::post(w->ioc, [worker = w.get()] { worker->upstream->close(); });
    }
    if (!waitFor(kCloseGrace)) {
      for (auto& w : workers) {
        asio::post(w->ioc, [worker = w.get()] { worker->closeClients(); });
      }
      waitFor(kFinalWait);
    }
  }
  // Every loop has run out of work by now, unless a handler is stuck; stop() then ends it and
  // the frames left are destroyed with their io_context (see Worker).
  for (auto& w : workers) {
    w->ioc.stop();
  }
  for (auto& t : threads) {
    t.join();
  }
  return 0;
}

}  // namespace tollgate::net
