// The steps every inference handler shares, so that each reads "decode, plan, bound, call":
// refusing with the catalogue's error, planning for an endpoint (404 for an unknown model, 400 for
// a model of another endpoint), and the call itself (dryrun rules, admission on the team's
// balance, each route's prices, the attempts, the relay and its settlement).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "api/services.hpp"
#include "billing/charge.hpp"
#include "billing/pricing.hpp"
#include "core/result.hpp"
#include "exchange/request_context.hpp"
#include "http/writer.hpp"
#include "inference/execute.hpp"
#include "inference/plan.hpp"

namespace tollgate::api {

/// Answers `e`, recording its code for the access log.
boost::asio::awaitable<void> refuse(exchange::RequestContext& ctx, const Error& e,
                                    http::ResponseWriter& out);

/// The plan for `model` on `endpoint` (see inference::plan): model_not_found as for chat, or
/// model_wrong_endpoint when the model serves another endpoint.
Result<inference::Plan> planFor(const config::Config& config, std::string_view model,
                                config::Endpoint endpoint, std::string_view episode_id = {},
                                std::string_view variant_name = {});

/// What admission needs of a decoded request, besides its plan.
struct Admission {
  billing::RequestFacts facts;  ///< What its spend row will say, and its token bound.
  /// The most it can cost: its hold (nullopt: more than any balance can hold).
  std::optional<money::Pico> max_cost;
  bool dryrun = false;  ///< tollgate::dryrun: admitted as billed, then nothing charged or kept.
};

/// The call: refuses a dryrun the gateway or the caller's team does not take, holds
/// `admission.max_cost` on the team's balance (403 when it cannot), gives each of `plan`'s routes
/// its prices, then serves the request through `start` (as a stream when `stream`), relaying the
/// first answer and settling it before its last byte.
boost::asio::awaitable<void> call(const Services& s, exchange::RequestContext& ctx,
                                  inference::Plan& plan, Admission admission,
                                  const inference::StartExchange& start, bool stream,
                                  http::ResponseWriter& out);

}  // namespace tollgate::api
