// `tollgate serve`'s server: wires the shared services (adapters, secret redactor, the
// authenticator) and each worker's router to the HTTP server.
#pragma once

#include "config/config.hpp"
#include "http/authenticator.hpp"

namespace tollgate::api {

/// Serves `config` until SIGINT or SIGTERM; returns the process exit code. Routes that need an
/// API key ask `authenticator`; with none (open mode) every route is public.
int runGateway(const config::Config& config, const http::Authenticator* authenticator);

}  // namespace tollgate::api
