#include "net/server.hpp"

#include <sched.h>
#include <sys/resource.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "net/access_log.hpp"
#include "net/outbound.hpp"
#include "net/session.hpp"
#include "net/upstream_pool.hpp"

namespace tollgate::net {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr auto kUseTuple = asio::as_tuple(asio::use_awaitable);
/// After the shutdown deadline, first the upstream calls are closed (their clients get an error
/// event or answer), then, after this grace, the client connections.
constexpr auto kCloseGrace = std::chrono::milliseconds(200);
constexpr auto kFinalWait = std::chrono::seconds(2);
/// How long the acceptor waits before trying again when the process is out of descriptors.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

/// State one worker thread owns: its io_context, upstream pool, router, sessions and access log.
/// Members are destroyed in reverse order: the io_context (and with it every coroutine frame,
/// which may hold upstream calls, handlers' state and session guards) goes first.
struct Worker {
  Worker(const config::LiveConfig& live, const RouterFactory& make_router,
         const std::atomic<bool>& draining, std::span<const Listener> listeners,
         const AddObservers& add_observers) {
    upstream = makeUpstreamPool(ioc);
    outbound = makeOutbound(*upstream);
    observers.add(access_log);
    add_observers(observers);
    for (const Listener l : listeners) {
      routers.push_back(
          std::make_unique<http::Router>(make_router(*upstream, *outbound, draining, l)));
      shared.emplace_back(new SessionShared{live, *routers.back(), draining, observers, {}, {}});
    }
  }
  ~Worker() {
    upstream->close();  // Idle pooled sockets go while their io_context still exists.
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Closes every client connection: what is in flight ends at once.
  void closeClients() {
    error_code ignored;
    for (const auto& one : shared) {
      for (tcp::socket* s : one->open) {
        s->close(ignored);
      }
    }
  }

  std::unique_ptr<UpstreamPool> upstream;
  std::unique_ptr<http::OutboundHttp> outbound;
  std::vector<std::unique_ptr<http::Router>> routers;  ///< One per listener.
  std::vector<std::unique_ptr<SessionShared>> shared;  ///< One per listener.
  asio::io_context ioc{1};
  AccessLog access_log{ioc};
  exchange::Observers observers;  ///< Of this worker's exchanges: the access log, then others.
};

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
  log::event(log::Level::Error, "connection handler failed", what);
}

/// Errors of accept() that mean the process or system is out of a resource: retrying at once
/// would spin, so the acceptor backs off.
bool outOfResources(const error_code& ec) {
  return ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
         ec == asio::error::no_memory || ec.value() == ENFILE;
}

/// Accepts on the first worker's thread and hands each connection to the workers in turn (to
/// their sessions of listener number `listener`); the accepted socket already belongs to its
/// worker's io_context.
asio::awaitable<void> acceptLoop(tcp::acceptor& acceptor,
                                 const std::vector<std::unique_ptr<Worker>>& workers,
                                 std::size_t listener) {
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
        log::event(log::Level::Warn, "cannot accept connections; retrying every 100 ms",
                   ec.message());
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
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    spawnSession(*w.shared[listener], std::move(socket), logFailure);
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

/// Waits for the next signal: SIGHUP reloads and waits again; SIGINT and SIGTERM end the wait
/// (and so main_ioc.run()).
void awaitSignal(asio::signal_set& signals, const std::function<void()>& reload) {
  signals.async_wait([&signals, &reload](const error_code& ec, int signal) {
    if (!ec && signal == SIGHUP) {
      reload();
      awaitSignal(signals, reload);
    }
  });
}

}  // namespace

int serve(const config::LiveConfig& live, const RouterFactory& make_router,
          const std::function<void()>& reload, const AddObservers& add_observers) {
  std::signal(SIGPIPE, SIG_IGN);
  raiseOpenFileLimit();
  const std::shared_ptr<const config::Config> first = live.pin();
  const config::Config& config = *first;
  const config::Gateway& g = config.gateway;
  std::atomic<bool> draining{false};
  // The gateway's listener, and the console's when it has one of its own.
  std::vector<Listener> kinds{Listener::Gateway};
  std::vector<std::pair<std::string, std::uint16_t>> addresses{{g.host, g.port}};
  if (config.console.enabled && config.console.ownListener()) {
    kinds.push_back(Listener::Console);
    addresses.emplace_back(config.console.host, config.console.port);
  }
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned i = workerCount(g.workers); i > 0; --i) {
    workers.push_back(std::make_unique<Worker>(live, make_router, draining, kinds, add_observers));
  }
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors;
  std::vector<tcp::endpoint> endpoints;
  for (const auto& [host, port] : addresses) {
    acceptors.push_back(std::make_unique<tcp::acceptor>(workers.front()->ioc));
    try {
      listen(*acceptors.back(), tcp::endpoint(asio::ip::make_address(host), port));
      endpoints.push_back(acceptors.back()->local_endpoint());
    } catch (const std::exception& e) {
      log::line(log::Level::Error,
                "cannot listen on " + host + ":" + std::to_string(port) + ": " + e.what());
      return 1;
    }
  }

  asio::io_context main_ioc{1};
  asio::signal_set signals(main_ioc, SIGINT, SIGTERM, SIGHUP);
  awaitSignal(signals, reload);

  std::mutex mu;
  std::condition_variable cv;
  unsigned finished = 0;
  std::vector<std::thread> threads;
  using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;
  std::vector<WorkGuard> keep_running;  // Workers wait for connections until shutdown.
  for (std::size_t i = 0; i < acceptors.size(); ++i) {
    asio::co_spawn(workers.front()->ioc, acceptLoop(*acceptors[i], workers, i), logFailure);
  }
  for (auto& w : workers) {
    keep_running.emplace_back(w->ioc.get_executor());
    threads.emplace_back([&, worker = w.get()] {
      nameThisThread("tg-io");
      worker->ioc.run();
      std::lock_guard lock(mu);
      ++finished;
      cv.notify_all();
    });
  }
  std::printf("tollgate listening on %s\n", endpointText(endpoints.front()).c_str());
  if (endpoints.size() > 1) {
    std::printf("tollgate console listening on %s\n", endpointText(endpoints.back()).c_str());
  }
  std::fflush(stdout);

  main_ioc.run();  // Returns once a signal arrived.
  draining = true;
  asio::post(workers.front()->ioc, [&acceptors] {
    error_code ignored;
    for (const auto& a : acceptors) {
      a->close(ignored);
    }
  });
  keep_running.clear();
  for (auto& w : workers) {
    asio::post(w->ioc, [worker = w.get()] {
      error_code ignored;
      for (const auto& one : worker->shared) {
        for (tcp::socket* s : one->idle) {
          s->cancel(ignored);
        }
      }
      worker->upstream->drain();
    });
  }
  auto waitFor = [&](auto timeout) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, timeout, [&] { return finished == workers.size(); });
  };
  if (!waitFor(g.shutdown_timeout)) {
    log::event(log::Level::Warn, "shutdown deadline passed; closing remaining connections", "");
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
