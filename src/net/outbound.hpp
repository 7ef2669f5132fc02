// The OutboundHttp port over a worker's upstream pool: a handler's request to a configured
// service travels like an upstream call (same TLS checks, pooling and timeouts).
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "http/outbound.hpp"
#include "providers/transport.hpp"

namespace tollgate::net {

/// Sends through `transport`, which must outlive what is returned.
std::unique_ptr<http::OutboundHttp> makeOutbound(providers::Transport& transport);

/// Sends through an upstream pool of its own on `ioc` (a background sender's event loop), whose
/// connections it closes when destroyed: destroy it while `ioc` exists, after its last send.
std::unique_ptr<http::OutboundHttp> makeOwnOutbound(boost::asio::io_context& ioc);

}  // namespace tollgate::net
