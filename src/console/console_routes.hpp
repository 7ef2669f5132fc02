// The console's routes: the sign-in page under /console/ and its JSON API under /console/api/
// (docs/console-api.md), added beside the inference API's unless [console] enabled = false. Each
// declares what it needs of its caller (nothing, a session, or a role in the team the path names),
// checked once before its handler runs.
#pragma once

#include <vector>

#include "console/console_call.hpp"
#include "http/router.hpp"

namespace tollgate::console {

/// Appends the console's routes to `routes`; their handlers use `s` (copied into each). Called
/// once per worker: with [console.oidc], the worker's client of the provider is made here.
void addRoutes(std::vector<http::Route>& routes, const ConsoleServices& s);

}  // namespace tollgate::console
