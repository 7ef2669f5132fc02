// `tollgate serve`: wires the shared services (adapters, secret redactor) and each worker's
// router to the HTTP server.
#pragma once

#include "config/config.hpp"

namespace tollgate::api {

/// Serves `config` until SIGINT or SIGTERM; returns the process exit code.
int runGateway(const config::Config& config);

}  // namespace tollgate::api
