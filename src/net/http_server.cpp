#include "net/http_server.hpp"

#include <sched.h>

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

#include "net/access_log.hpp"
#include "net/chat_relay.hpp"
#include "openai/models.hpp"

namespace tollgate::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kFirstReadBytes = 4096;
constexpr auto kWriteTimeout = std::chrono::seconds(60);
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr std::size_t kResponseHeadReserve = 160;
constexpr unsigned kHttp11 = 11;
/// Logged when the client hung up before the answer was complete (nginx's convention).
constexpr int kClientClosedRequest = 499;

/// State one worker thread owns: its io_context, upstream pool, idle sessions and access log.
struct Worker {
  explicit Worker(const config::Config& c) : config(c) {}

  const config::Config& config;
  asio::io_context ioc{1};
  std::unique_ptr<UpstreamClient> upstream = makeHttpUpstreamClient(ioc);
  std::unordered_set<beast::tcp_stream*> idle;  ///< Sessions waiting for their next request.
  AccessLog access_log{ioc};
  std::atomic<bool>* draining = nullptr;
};

struct Reply {
  int status = 200;
  std::string body;
  std::string_view allow;  ///< For 405.
};

Reply errorReply(const Error& e) { return {e.status(), errorBody(e), {}}; }

bool isJson(std::string_view content_type) {
  constexpr std::string_view kJson = "application/json";
  if (content_type.size() < kJson.size()) {
    return false;
  }
  for (std::size_t i = 0; i < kJson.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(content_type[i])) != kJson[i]) {
      return false;
    }
  }
  return content_type.size() == kJson.size() || content_type[kJson.size()] == ';' ||
         content_type[kJson.size()] == ' ';
}

/// The status line and headers of a response whose body has `length` bytes. Written by hand:
/// Beast's serializer costs several times more on this hot path.
std::string responseHead(int status, unsigned version, std::string_view content_type,
                         std::size_t length, bool keep_alive, std::string_view allow) {
  std::string head;
  head.reserve(kResponseHeadReserve);
  head.append(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ")
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
  if (version >= 11 && !keep_alive) {
    head.append("\r\nConnection: close");
  } else if (version == 10 && keep_alive) {
    head.append("\r\nConnection: keep-alive");
  }
  head.append("\r\n\r\n");
  return head;
}

/// The client side of a chat exchange over one HTTP/1.x connection.
class BeastClientStream final : public ClientStream {
 public:
  BeastClientStream(beast::tcp_stream& stream, unsigned version, bool keep_alive)
      : stream_(stream), version_(version), keep_alive_(keep_alive) {}

  asio::awaitable<bool> send(int status, std::string_view content_type, std::string body) override {
    co_return co_await send(status, content_type, std::move(body), {});
  }

  /// `allow` is the Allow header of a 405; empty for none.
  asio::awaitable<bool> send(int status, std::string_view content_type, std::string body,
                             std::string_view allow) {
    const std::string head =
        responseHead(status, version_, content_type, body.size(), keep_alive_, allow);
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(head), asio::buffer(body)};
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
  bool chunked_ = false;
  bool ok_ = true;
  std::size_t bytes_out_ = 0;
};

/// Answers every request but a well-formed chat completion, which needs the stream: for that
/// it returns nothing.
std::optional<Reply> route(const Worker& w, http::verb method, std::string_view path,
                           std::string_view query, std::string_view content_type) {
  struct Endpoint {
    std::string_view path;
    http::verb method;
    std::string_view allow;
  };
  static constexpr Endpoint kEndpoints[] = {
      {"/health", http::verb::get, "GET"},
      {"/ready", http::verb::get, "GET"},
      {"/v1/models", http::verb::get, "GET"},
      {"/v1/chat/completions", http::verb::post, "POST"},
  };
  for (const Endpoint& e : kEndpoints) {
    if (e.path != path) {
      continue;
    }
    if (e.method != method) {
      Reply r =
          errorReply(Error{ErrorKind::MethodNotAllowed,
                           std::string(path) + " accepts " + std::string(e.allow) + " only", ""});
      r.allow = e.allow;
      return r;
    }
    if (path == "/health") {
      return Reply{200, R"({"status":"ok"})", {}};
    }
    if (path == "/ready") {
      if (w.draining->load()) {
        return errorReply(Error{ErrorKind::ServiceUnavailable, "shutting down", ""});
      }
      return Reply{200, R"({"status":"ready"})", {}};
    }
    if (path == "/v1/models") {
      auto models = openai::listModels(w.config, query);
      return models ? Reply{200, std::move(models).value(), {}} : errorReply(models.error());
    }
    if (!isJson(content_type)) {
      return errorReply(
          Error{ErrorKind::UnsupportedMediaType, "Content-Type must be application/json", ""});
    }
    return std::nullopt;
  }
  return errorReply(Error{ErrorKind::RouteNotFound,
                          "no endpoint " + std::string(path) +
                              " (the base URL must end in /v1, e.g. http://host:port/v1)",
                          ""});
}

/// Feeds bytes already in `buffer` to the parser; an error only when they are malformed or over
/// a limit, none when more bytes are needed.
beast::error_code feedBuffered(http::request_parser<http::string_body>& parser,
                               beast::flat_buffer& buffer) {
  beast::error_code ec;
  while (buffer.size() > 0 && !parser.is_done()) {
    const std::size_t used = parser.put(buffer.data(), ec);
    buffer.consume(used);
    if (ec == http::error::need_more) {
      return {};
    }
    if (ec || used == 0) {
      break;
    }
  }
  return ec;
}

/// What a failed request read means for the client: an error to send before closing, or
/// nothing when the client simply went away.
std::optional<Error> readFailure(const beast::error_code& ec, const config::Gateway& g,
                                 std::string_view part) {
  if (ec == http::error::header_limit) {
    return Error{ErrorKind::HeadersTooLarge,
                 "request headers exceed " + std::to_string(g.max_header_bytes) + " bytes", ""};
  }
  if (ec == http::error::body_limit) {
    // Also raised while reading the header, when Content-Length already exceeds the limit.
    return Error{ErrorKind::PayloadTooLarge,
                 "request body exceeds " + std::to_string(g.max_body_bytes) + " bytes", ""};
  }
  if (ec == beast::error::timeout) {
    return Error{ErrorKind::RequestTimeout,
                 "request " + std::string(part) + " not received in time", ""};
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == asio::error::eof || ec == asio::error::connection_reset ||
      ec == asio::error::operation_aborted) {
    return std::nullopt;
  }
  return Error{ErrorKind::InvalidValue, "malformed HTTP request: " + ec.message(), ""};
}

/// Writes an error for a request that could not be read and closes the connection.
asio::awaitable<void> rejectAndClose(beast::tcp_stream& stream, Error e) {
  BeastClientStream client(stream, kHttp11, false);
  co_await client.sendError(e);
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  // Lingering close: a client still sending its body would get a reset, and could lose our
  // answer, if we closed with unread bytes. Discard what arrives for a bounded time.
  stream.expires_after(kLingerTime);
  std::array<char, kFirstReadBytes> scratch;
  for (;;) {
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(scratch), kUseTuple);
    if (ec) {
      break;
    }
  }
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

class IdleGuard {
 public:
  IdleGuard(Worker& w, beast::tcp_stream& s) : w_(w), s_(s) { w_.idle.insert(&s_); }
  ~IdleGuard() { w_.idle.erase(&s_); }
  IdleGuard(const IdleGuard&) = delete;
  IdleGuard& operator=(const IdleGuard&) = delete;

 private:
  Worker& w_;
  beast::tcp_stream& s_;
};

asio::awaitable<void> session(Worker& w, tcp::socket socket) {
  const config::Gateway& g = w.config.gateway;
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    if (w.draining->load()) {
      co_return;
    }
    if (buffer.size() == 0) {
      // Waiting for the next request: only the idle timeout applies, and shutdown may end it.
      IdleGuard guard(w, stream);
      stream.expires_after(g.idle_timeout);
      auto [ec, n] = co_await stream.async_read_some(buffer.prepare(kFirstReadBytes), kUseTuple);
      if (ec) {
        co_return;
      }
      buffer.commit(n);
    }
    const auto started = Clock::now();
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(g.max_header_bytes));
    parser.body_limit(g.max_body_bytes);
    parser.eager(true);
    // Usually the whole request arrived with the first read: parse it without timers or I/O.
    beast::error_code hec = feedBuffered(parser, buffer);
    if (!hec && !parser.is_header_done()) {
      ReadDeadline deadline(stream, g.header_timeout);
      std::tie(hec, std::ignore) =
          co_await http::async_read_header(stream, buffer, parser, kUseTuple);
      if (deadline.fired()) {
        hec = beast::error::timeout;
      }
    }
    if (hec) {
      if (auto err = readFailure(hec, g, "headers")) {
        co_await rejectAndClose(stream, std::move(*err));
      }
      co_return;
    }
    const auto& header = parser.get();
    if (beast::iequals(header[http::field::expect], "100-continue")) {
      http::response<http::empty_body> cont{http::status::continue_, header.version()};
      stream.expires_after(kWriteTimeout);
      co_await http::async_write(stream, cont, kUseTuple);
    }
    beast::error_code bec;
    if (!parser.is_done()) {
      ReadDeadline deadline(stream, g.body_timeout);
      std::tie(bec, std::ignore) = co_await http::async_read(stream, buffer, parser, kUseTuple);
      if (deadline.fired()) {
        bec = beast::error::timeout;
      }
    }
    if (bec) {
      if (auto err = readFailure(bec, g, "body")) {
        co_await rejectAndClose(stream, std::move(*err));
      }
      co_return;
    }

    auto& req = parser.get();
    const std::string_view target = req.target();
    const std::size_t qmark = target.find('?');
    const std::string_view path = target.substr(0, qmark);
    const std::string_view query =
        qmark == std::string_view::npos ? std::string_view{} : target.substr(qmark + 1);
    const bool keep_alive = req.keep_alive() && !w.draining->load();
    BeastClientStream client(stream, req.version(), keep_alive);
    AccessLogEntry log;
    log.method = req.method_string();
    log.path = path;
    log.bytes_in = req.body().size();

    if (std::optional<Reply> reply =
            route(w, req.method(), path, query, req[http::field::content_type])) {
      log.status = reply->status;
      co_await client.send(reply->status, "application/json", std::move(reply->body), reply->allow);
    } else {
      using namespace asio::experimental::awaitable_operators;
      // A client that hangs up cancels the relay, and with it the upstream call.
      auto done = co_await (relayChat(w.config, *w.upstream, req.body(), client) ||
                            clientGone(stream.socket()));
      if (done.index() == 0) {
        const ChatOutcome& outcome = std::get<0>(done);
        log.status = outcome.status;
        log.model = outcome.model;
        log.upstream = outcome.upstream;
      } else {
        log.status = kClientClosedRequest;
        client.markGone();
      }
    }
    log.bytes_out += client.bytesOut();
    log.total = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
    w.access_log.write(log);
    if (!client.ok() || !client.keepAlive()) {
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      co_return;
    }
  }
}

void logSessionFailure(std::exception_ptr e) {
  if (!e) {
    return;
  }
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "{\"level\":\"error\",\"msg\":\"session failed: %s\"}\n", ex.what());
  }
}

/// Accepts on the first worker's thread and hands each connection to the workers in turn; the
/// accepted socket already belongs to its worker's io_context.
asio::awaitable<void> acceptLoop(tcp::acceptor& acceptor,
                                 const std::vector<std::unique_ptr<Worker>>& workers) {
  for (std::size_t next = 0;; ++next) {
    Worker& w = *workers[next % workers.size()];
    auto [ec, socket] = co_await acceptor.async_accept(w.ioc, kUseTuple);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) {
      co_return;
    }
    if (ec) {
      continue;  // e.g. EMFILE; the next accept may succeed.
    }
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    asio::co_spawn(w.ioc, session(w, std::move(socket)), logSessionFailure);
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

}  // namespace

int serve(const config::Config& config) {
  std::signal(SIGPIPE, SIG_IGN);
  const config::Gateway& g = config.gateway;
  std::atomic<bool> draining{false};
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned i = workerCount(g.workers); i > 0; --i) {
    workers.push_back(std::make_unique<Worker>(config));
    workers.back()->draining = &draining;
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
  asio::co_spawn(workers.front()->ioc, acceptLoop(acceptor, workers), logSessionFailure);
  for (auto& w : workers) {
    keep_running.emplace_back(w->ioc.get_executor());
    threads.emplace_back([&, worker = w.get()] {
      worker->ioc.run();
      std::lock_guard lock(mu);
      ++finished;
      cv.notify_all();
    });
  }
  std::printf("tollgate listening on %s:%u\n", endpoint.address().to_string().c_str(),
              static_cast<unsigned>(endpoint.port()));
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
  {
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, g.shutdown_timeout, [&] { return finished == workers.size(); })) {
      std::fprintf(stderr,
                   "{\"level\":\"warn\",\"msg\":\"shutdown deadline passed; "
                   "closing remaining connections\"}\n");
    }
  }
  for (auto& w : workers) {
    w->ioc.stop();
  }
  for (auto& t : threads) {
    t.join();
  }
  return 0;
}

}  // namespace tollgate::net
