// Execute: the attempt loop over a plan's routes and their providers. Each attempt asks the
// provider's adapter for the upstream request, sends it through the provider's transport and
// relays the answer. While nothing has reached the client, a failure that another try can fix is
// retried (backoff with jitter, or the upstream's Retry-After), then the next provider is tried,
// then the next route; providers whose circuit breaker is open are skipped; one deadline bounds it
// all. Once a byte has reached the client, nothing is tried again.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>

#include "exchange/request_context.hpp"
#include "exchange/settlement.hpp"
#include "http/writer.hpp"
#include "inference/plan.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "providers/adapter.hpp"
#include "providers/transport.hpp"
#include "routing/breaker.hpp"

namespace tollgate::inference {

/// The shared services an attempt uses.
struct Upstreams {
  providers::Transport& network;  ///< This worker's pooled HTTP(S) client.
  const providers::Registry& adapters;
  const routing::Breakers& breakers;  ///< Shared by every worker.
};

/// Starts an attempt at one provider of a route through its adapter; nullptr when the adapter
/// does not serve the endpoint.
using StartExchange = std::function<std::unique_ptr<providers::Exchange>(
    const providers::Adapter&, const config::Provider&, const Route&)>;

/// Serves a request by `plan`: for each attempt, `start` makes the exchange; the first provider
/// that answers is relayed to `out` (as a stream when `stream`); when none does, the last failure
/// is. Records the provider, variant, attempts, upstream time and outcome in `ctx`, and settles
/// what the client got with `settlement` before the answer's last byte.
boost::asio::awaitable<void> execute(exchange::RequestContext& ctx, const Plan& plan,
                                     const StartExchange& start, bool stream, const Upstreams& up,
                                     exchange::Settlement& settlement, http::ResponseWriter& out);

/// Starts the attempts at a chat `request` answered under `meta`: each route's variant (a
/// function's) sets its defaults and system prompt on the request, and each route's prices go on
/// the meta. `request` and `meta` must outlive what is returned.
StartExchange chatExchanges(const openai::ChatRequest& request, const openai::ResponseMeta& meta);

}  // namespace tollgate::inference
