// `tollgate serve`'s server: wires the shared services (adapters, secret redactor, the
// authenticator) and each worker's router to the HTTP server.
#pragma once

#include "billing/ledger.hpp"
#include "config/config.hpp"
#include "http/authenticator.hpp"

namespace tollgate::api {

/// Serves `config` until SIGINT or SIGTERM; returns the process exit code. Routes that need an
/// API key ask `authenticator`; with none (open mode) every route is public. Requests are billed
/// through `ledger` (nullptr: nothing is billed), in open mode to `open_team_id` if not empty.
int runGateway(const config::Config& config, const http::Authenticator* authenticator,
               billing::Ledger* ledger, const std::string& open_team_id);

}  // namespace tollgate::api
