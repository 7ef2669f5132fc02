// Relay: a provider's 2xx answer to the client, as it arrives. JSON is read whole (bounded),
// decoded by the exchange and sent; SSE goes event by event, each read's events in one write,
// never buffered whole. Upstream text passes the secret redactor before anything of it leaves.
#pragma once

#include <boost/asio/awaitable.hpp>

#include "core/result.hpp"
#include "http/writer.hpp"
#include "inference/settlement.hpp"
#include "providers/adapter.hpp"
#include "providers/secret_redactor.hpp"

namespace tollgate::inference {

/// Relays the answer of `call`, settling its charge before its last byte. Returns the status the
/// client effectively saw (for a stream ended by an error event, that error's status), or an
/// error when nothing reached the client yet, so another provider may be tried.
boost::asio::awaitable<Result<int>> relayAnswer(providers::UpstreamCall& call,
                                                providers::Exchange& exchange, bool stream,
                                                const providers::SecretRedactor& redactor,
                                                Settlement& settlement, http::ResponseWriter& out);

}  // namespace tollgate::inference
