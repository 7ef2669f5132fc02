// The request pipeline every inference handler calls once it has decoded, planned and bounded a
// request: named stages run in a fixed order by call() (see pipeline.cpp), each of which either
// answers the client (and the call ends) or hands the next its input:
//   dryrun rules -> key rules -> request limits -> claim -> cache read -> token and model
//   limits -> hold -> execute -> keep.
// Request limits therefore count cache hits and Idempotency-Key replays, and token and model
// limits only work that goes upstream. Each reservation (the claim, the hold) is a guard that
// releases itself unless its settlement completes it.
#pragma once

#include <rapidjson/document.h>

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "billing/charge.hpp"
#include "cache/codec.hpp"
#include "core/result.hpp"
#include "exchange/request_context.hpp"
#include "flow/refuse.hpp"
#include "flow/services.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"
#include "inference/execute.hpp"
#include "inference/plan.hpp"

namespace tollgate::flow {

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
  /// The digest of the decoded request, which an Idempotency-Key's retry must match; computed
  /// only for a request that carries one.
  std::function<std::string()> digest = {};
  /// How the request uses the inference cache; nullopt: not at all.
  std::optional<cache::CachePlan> cache = {};
};

/// Runs the pipeline: a fenced gateway's request, a dryrun the gateway or the caller's team
/// does not take and a model the caller's key does not allow are refused; the request's
/// Idempotency-Key is claimed (a retry answered with the first answer, see claim.hpp); the
/// inference cache answers when it may and has the answer (charged nothing); `admission.max_cost`
/// is held on the team's balance (403 when it cannot), each of `plan`'s routes given its prices,
/// and the request served through `start` (as a stream when `stream`), the first answer relayed and
/// settled before its last byte; a complete answer is kept in the cache when it may be.
boost::asio::awaitable<void> call(const Services& s, exchange::RequestContext& ctx,
                                  const http::Request& req, inference::Plan& plan,
                                  Admission admission, const inference::StartExchange& start,
                                  bool stream, http::ResponseWriter& out);

/// How a request whose cache options are `options` uses the inference cache: nullopt when they
/// are off. Its key is that of `body` (the decoded request, less its `ignored` members) as sent
/// to `plan`'s first route on `endpoint`, for the billed team; `codec` reads and keeps its
/// answers.
std::optional<cache::CachePlan> cachePlan(const Services& s, const exchange::RequestContext& ctx,
                                          const inference::Plan& plan,
                                          const openai::CacheOptions& options,
                                          std::string_view endpoint, const rapidjson::Value& body,
                                          std::span<const std::string_view> ignored,
                                          cache::CacheCodec* codec);

/// The response header that says whether the inference cache answered: "hit", "miss" or (an
/// embeddings batch of which some inputs were found) "partial".
inline constexpr std::string_view kCacheHeader = "Tollgate-Cache";

}  // namespace tollgate::flow
