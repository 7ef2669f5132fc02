// The steps every inference handler shares, so that each reads "decode, plan, bound, call":
// refusing with the catalogue's error, planning for an endpoint (404 for an unknown model, 400 for
// a model of another endpoint), and the call itself (dryrun rules, admission on the team's
// balance, each route's prices, the attempts, the relay and its settlement).
#pragma once

#include <rapidjson/document.h>

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "api/cache_codec.hpp"
#include "api/services.hpp"
#include "billing/charge.hpp"
#include "billing/pricing.hpp"
#include "core/result.hpp"
#include "exchange/request_context.hpp"
#include "http/request.hpp"
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
  /// The digest of the decoded request, which an Idempotency-Key's retry must match; computed
  /// only for a request that carries one.
  std::function<std::string()> digest = {};
  /// How the request uses the inference cache; nullopt: not at all.
  std::optional<CachePlan> cache = {};
};

/// The call: refuses a fenced gateway's request and a dryrun the gateway or the caller's team does
/// not take; claims the
/// request's Idempotency-Key (answering a retry with the first answer, see idempotency.hpp);
/// answers from the inference cache when it may and has the answer (charged nothing); holds
/// `admission.max_cost` on the team's balance (403 when it cannot), gives each of `plan`'s routes
/// its prices, then serves the request through `start` (as a stream when `stream`), relaying the
/// first answer and settling it before its last byte; keeps a complete answer in the cache when
/// it may.
boost::asio::awaitable<void> call(const Services& s, exchange::RequestContext& ctx,
                                  const http::Request& req, inference::Plan& plan,
                                  Admission admission, const inference::StartExchange& start,
                                  bool stream, http::ResponseWriter& out);

/// The team billed for the request: the caller's, or open mode's team (empty: none).
std::string billedTeam(const Services& s, const exchange::RequestContext& ctx);

/// How a request whose cache options are `options` uses the inference cache: nullopt when they
/// are off. Its key is that of `body` (the decoded request, less its `ignored` members) as sent
/// to `plan`'s first route on `endpoint`, for the billed team.
std::optional<CachePlan> cachePlan(const Services& s, const exchange::RequestContext& ctx,
                                   const inference::Plan& plan, const openai::CacheOptions& options,
                                   std::string_view endpoint, const rapidjson::Value& body,
                                   std::span<const std::string_view> ignored,
                                   const CacheCodec* codec);

/// The response header that says whether the inference cache answered: "hit", "miss" or (an
/// embeddings batch of which some inputs were found) "partial".
inline constexpr std::string_view kCacheHeader = "Tollgate-Cache";

/// Marks the exchange a dryrun when the request says so; an error when the gateway or the team
/// refuses them.
std::optional<Error> noteDryrun(exchange::RequestContext& ctx, bool dryrun);

/// Answers the request with `replay`, made of what the cache kept, whose counts are `usage`:
/// charged nothing, its spend row (of `facts`, for `team_id`) marked a hit.
boost::asio::awaitable<void> answerFromCache(const Services& s, exchange::RequestContext& ctx,
                                             const inference::Plan& plan,
                                             const billing::RequestFacts& facts,
                                             const std::string& team_id, const Replay& replay,
                                             exchange::TokenUsage usage, http::ResponseWriter& out);

/// Whether answers of `model` may be kept: never those of a model that retains no data (ZDR) or
/// runs in a trusted execution environment (TEE).
bool mayKeepAnswers(const config::Model& model);

/// Gives the exchange the gateway's lease (admitted in the epoch its key was checked in), and says
/// whether it has run out since: the request is then refused (503 gateway_fenced), and nothing of
/// it may be sent, upstream or to the client.
bool fenced(const Services& s, exchange::RequestContext& ctx);

}  // namespace tollgate::api
