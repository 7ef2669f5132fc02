// Relay: a provider's 2xx answer to the client, as it arrives. JSON is read whole (bounded),
// decoded by the exchange and sent; SSE goes event by event, each read's events in one write,
// never buffered whole. Upstream text passes the secret redactor before anything of it leaves.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "core/result.hpp"
#include "exchange/settlement.hpp"
#include "http/writer.hpp"
#include "providers/adapter.hpp"
#include "providers/secret_redactor.hpp"
#include "providers/transport.hpp"

namespace tollgate::inference {

/// Relays the answer of `call`, settling its charge before its last byte. Returns the status the
/// client effectively saw (for a stream ended by an error event, that error's status), or an
/// error when nothing reached the client yet, so another provider may be tried. Once `ctx`'s
/// gateway is fenced nothing more is relayed: a stream ends with a gateway_fenced error event.
boost::asio::awaitable<Result<int>> relayAnswer(const exchange::RequestContext& ctx,
                                                providers::UpstreamCall& call,
                                                providers::Exchange& exchange, bool stream,
                                                const providers::SecretRedactor& redactor,
                                                exchange::Settlement& settlement,
                                                http::ResponseWriter& out);

}  // namespace tollgate::inference
