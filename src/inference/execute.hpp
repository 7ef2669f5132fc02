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

#include "http/request_context.hpp"
#include "http/writer.hpp"
#include "inference/plan.hpp"
#include "inference/settlement.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "providers/adapter.hpp"
#include "providers/secret_redactor.hpp"
#include "providers/transport.hpp"
#include "routing/breaker.hpp"

namespace tollgate::inference {

/// The shared services an attempt uses.
struct Upstreams {
  providers::Transport& network;  ///< This worker's pooled HTTP(S) client.
  const providers::Registry& adapters;
  const providers::SecretRedactor& redactor;
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
boost::asio::awaitable<void> execute(http::RequestContext& ctx, const Plan& plan,
                                     const StartExchange& start, bool stream, const Upstreams& up,
                                     Settlement& settlement, http::ResponseWriter& out);

/// Serves `request` by `plan` as execute() does; each route's variant (a function's) sets its
/// defaults and system prompt on the request, and its model's prices on `meta`.
boost::asio::awaitable<void> executeChat(http::RequestContext& ctx, const Plan& plan,
                                         const openai::ChatRequest& request,
                                         const openai::ResponseMeta& meta, const Upstreams& up,
                                         Settlement& settlement, http::ResponseWriter& out);

}  // namespace tollgate::inference
