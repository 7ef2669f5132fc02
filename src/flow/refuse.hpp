// How every stage and handler of the request path refuses a request: the catalogue's error body,
// with its code recorded for the exchange's end.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "core/error.hpp"
#include "exchange/request_context.hpp"
#include "http/writer.hpp"

namespace tollgate::flow {

/// Answers `e`, recording its code for the access log.
boost::asio::awaitable<void> refuse(exchange::RequestContext& ctx, const Error& e,
                                    http::ResponseWriter& out);

}  // namespace tollgate::flow
