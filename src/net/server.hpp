// The gateway's HTTP server: one io_context per worker thread, fed by one acceptor per listener
// (the gateway's, and the console's when it has its own); each worker has its own upstream pool,
// and a router and sessions per listener. Graceful shutdown on SIGINT/SIGTERM.
#pragma once

#include <atomic>
#include <functional>

#include "config/live_config.hpp"
#include "exchange/observer.hpp"
#include "http/outbound.hpp"
#include "http/router.hpp"
#include "providers/transport.hpp"

namespace tollgate::net {

/// Which listener a router serves: the gateway's, or the console's own ([console] listen).
enum class Listener { Gateway, Console };

/// Makes one worker's router for `listener` from that worker's upstream transport, its outbound
/// HTTP client (over the same pool) and the server's draining flag (true once shutdown began).
/// Called once per worker and listener, before serving.
using RouterFactory =
    std::function<http::Router(providers::Transport& network, http::OutboundHttp& outbound,
                               const std::atomic<bool>& draining, Listener listener)>;

/// Adds observers of one worker's exchanges beside its access log (called once per worker
/// thread, before serving; what it adds outlives the server).
using AddObservers = std::function<void(exchange::Observers& observers)>;

/// Serves `live`'s configuration until SIGINT or SIGTERM, then drains within
/// gateway.shutdown_timeout; on SIGHUP calls `reload` (on the thread that waits for signals).
/// Prints `tollgate listening on HOST:PORT` on stdout once accepting (and `tollgate console
/// listening on HOST:PORT` when the console has a listener of its own). Returns the process
/// exit code. Listeners and workers are those of the configuration served first. Each exchange's
/// end is told to its worker's access log, then to `observer` (nullptr: none; it must be
/// thread-safe, as every worker tells it).
int serve(const config::LiveConfig& live, const RouterFactory& make_router,
          const std::function<void()>& reload, const AddObservers& add_observers);

}  // namespace tollgate::net
