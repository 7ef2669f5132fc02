// The gateway's route table: every endpoint, with its method, path pattern, access, body limit,
// content types and handler.
#pragma once

#include "flow/services.hpp"
#include "http/router.hpp"

namespace tollgate::api {

/// The router of one worker, with `more` routes beside the inference API's (the console's).
/// Handlers keep a copy of `services`, whose referents (and the authenticator, if any) must
/// outlive the router.
http::Router makeRouter(const flow::Services& services, const http::Authenticator* authenticator,
                        std::vector<http::Route> more = {});

/// A router of `routes` and the health probes (/health, /ready) only: the console's own
/// listener.
http::Router makeProbedRouter(const flow::Services& services, std::vector<http::Route> routes);

}  // namespace tollgate::api
