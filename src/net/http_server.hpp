// The gateway's HTTP server: one io_context per worker thread, fed by one acceptor,
// keep-alive sessions with size and time limits, routing, and graceful shutdown on SIGINT/SIGTERM.
#pragma once

#include "config/config.hpp"

namespace tollgate::net {

/// Serves until SIGINT or SIGTERM, then drains within gateway.shutdown_timeout. Prints
/// `tollgate listening on HOST:PORT` on stdout once accepting. Returns the process exit code.
int serve(const config::Config& config);

}  // namespace tollgate::net
