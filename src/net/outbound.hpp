// The OutboundHttp port over a worker's upstream pool: a handler's request to a configured
// service travels like an upstream call (same TLS checks, pooling and timeouts).
#pragma once

#include <memory>

#include "http/outbound.hpp"
#include "providers/transport.hpp"

namespace tollgate::net {

/// Sends through `transport`, which must outlive what is returned.
std::unique_ptr<http::OutboundHttp> makeOutbound(providers::Transport& transport);

}  // namespace tollgate::net
