// The [console] section of the configuration: whether the console is served, the public origin
// it is reached at, who may sign in and how, and how long a session lasts.
#pragma once

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace tollgate::config {

/// The [console] table `r` reads (with its [console.oidc] table, if any).
Console parseConsole(const TableReader& r, const EnvLookup& env);

/// HOST:PORT of the gateway's listener (an IPv6 host in brackets).
std::string listenAddress(const Gateway& g);

/// Where browsers reach the console: [console] public_url, else the listener over http.
std::string consoleOrigin(const Config& c);

/// Whether `host` (as in a URL, IPv6 in brackets) is this machine's loopback: 127.0.0.1,
/// localhost or [::1].
bool isLoopbackHost(std::string_view host);

}  // namespace tollgate::config
