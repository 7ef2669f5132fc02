// The gateway's HTTP server: one io_context per worker thread, fed by one acceptor; each worker
// has its own upstream pool, router and sessions. Graceful shutdown on SIGINT/SIGTERM.
#pragma once

#include <atomic>
#include <functional>

#include "config/config.hpp"
#include "http/outbound.hpp"
#include "http/router.hpp"
#include "providers/transport.hpp"

namespace tollgate::net {

/// Makes one worker's router from that worker's upstream transport, its outbound HTTP client
/// (over the same pool) and the server's draining flag (true once shutdown began). Called once
/// per worker, before serving.
using RouterFactory =
    std::function<http::Router(providers::Transport& network, http::OutboundHttp& outbound,
                               const std::atomic<bool>& draining)>;

/// Serves until SIGINT or SIGTERM, then drains within gateway.shutdown_timeout. Prints
/// `tollgate listening on HOST:PORT` on stdout once accepting. Returns the process exit code.
int serve(const config::Config& config, const RouterFactory& make_router);

}  // namespace tollgate::net
