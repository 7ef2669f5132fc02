#include "api/request_flow.hpp"

#include <algorithm>

#include "api/idempotency.hpp"
#include "cache/cache_key.hpp"
#include "http/recording_writer.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::api {
namespace {

constexpr std::int64_t kMsPerSecond = 1000;
constexpr int kStatusOk = 200;

}  // namespace

boost::asio::awaitable<void> refuse(exchange::RequestContext& ctx, const Error& e,
                                    http::ResponseWriter& out) {
  ctx.error_code = errorSpec(e.kind).code;
  co_await out.sendError(e);
}

Result<inference::Plan> planFor(const config::Config& config, std::string_view model,
                                config::Endpoint endpoint, std::string_view episode_id,
                                std::string_view variant_name) {
  auto plan = inference::plan(config, model, episode_id, variant_name);
  if (plan && plan->model->endpoint != endpoint) {
    return Error{ErrorKind::WrongEndpoint,
                 "the model '" + plan->model->id + "' serves the " +
                     std::string(config::endpointName(plan->model->endpoint)) + " endpoint, not " +
                     std::string(config::endpointName(endpoint)) +
                     "; GET /v1/models lists every model",
                 "model"};
  }
  return plan;
}

std::string billedTeam(const Services& s, const exchange::RequestContext& ctx) {
  return ctx.caller.team_id.empty() ? s.open_team_id : ctx.caller.team_id;
}

std::optional<CachePlan> cachePlan(const Services& s, const exchange::RequestContext& ctx,
                                   const inference::Plan& plan, const openai::CacheOptions& options,
                                   std::string_view endpoint, const rapidjson::Value& body,
                                   std::span<const std::string_view> ignored,
                                   const CacheCodec* codec) {
  if (options.mode == openai::CacheOptions::Mode::Off) {
    return std::nullopt;
  }
  const inference::Route& route = plan.routes.front();
  const std::string team_id = billedTeam(s, ctx);
  const cache::KeyParts parts{team_id, endpoint, route.model->id,
                              route.variant != nullptr ? route.variant->name : std::string_view(),
                              ignored};
  return CachePlan{options, cache::requestKey(parts, body), codec};
}

std::optional<Error> noteDryrun(exchange::RequestContext& ctx, bool dryrun) {
  if (dryrun && !ctx.config.gateway.allow_dryrun) {
    return Error{ErrorKind::DryrunNotAllowed,
                 "this gateway does not take tollgate::dryrun requests; send the request without "
                 "it (it is then billed)",
                 "tollgate::dryrun"};
  }
  if (dryrun && !ctx.caller.team_allows_dryrun) {
    return Error{ErrorKind::DryrunNotAllowed,
                 "the API key's team does not take tollgate::dryrun requests (tollgate admin teams "
                 "dryrun TEAM allow); send the request without it (it is then billed)",
                 "tollgate::dryrun"};
  }
  ctx.dryrun = dryrun;
  return std::nullopt;
}

bool mayKeepAnswers(const config::Model& model) { return !model.zdr && !model.tee; }

bool fenced(const Services& s, exchange::RequestContext& ctx) {
  if (ctx.lease == nullptr && s.lease != nullptr) {
    const std::optional<std::uint64_t> now = s.lease->trusted(Lease::Clock::now());
    ctx.lease = s.lease;
    // Admitted in the epoch its key was checked in (none in open mode: this one).
    ctx.lease_epoch = ctx.caller.lease_epoch.value_or(now.value_or(0));
    if (!now) {
      return true;
    }
  }
  return ctx.fenced();
}

boost::asio::awaitable<void> answerFromCache(const Services& s, exchange::RequestContext& ctx,
                                             const inference::Plan& plan,
                                             const billing::RequestFacts& facts,
                                             const std::string& team_id, const Replay& replay,
                                             exchange::TokenUsage usage,
                                             http::ResponseWriter& out) {
  if (fenced(s, ctx)) {
    co_return co_await refuse(ctx, fencedError(), out);  // Kept for a key that may be revoked.
  }
  const inference::Route& route = plan.routes.front();
  ctx.served = route.model;
  ctx.variant = route.variant != nullptr ? route.variant->name : std::string();
  ctx.usage = usage;
  ctx.status = kStatusOk;
  http::Response r = replay.streamed ? http::Response::eventStream() : http::Response();
  r.content_type = replay.content_type;
  r.header(std::string(kCacheHeader), "hit");
  r.body = replay.body;
  co_await out.sendKept(std::move(r), replay.streamed);
  billing::recordCacheHit(s.ledger, ctx, team_id, *route.model, facts);
}

namespace {

/// The cache's entry for the request, if it has one.
boost::asio::awaitable<std::optional<store::CacheEntry>> cached(const Services& s,
                                                                const CachePlan& cache,
                                                                const std::string& team_id) {
  std::vector<std::string> keys{cache.key};
  auto found =
      co_await s.cache.find(team_id, std::move(keys), cache.options.notBefore(store::nowMs()));
  co_return std::move(found.front());
}

/// How long a claim of a request on `plan` may be running: the request's deadline (its first
/// route's total time limit, see inference::execute) and a minute more; an hour when it has none.
std::int64_t leaseMs(const inference::Plan& plan, bool stream) {
  constexpr std::int64_t kMargin = 60'000;
  constexpr std::int64_t kNoLimit = 3'600'000;
  const config::Timeouts& t = plan.routes.front().timeouts;
  const auto limit = stream ? t.streaming_total : t.non_streaming_total;
  return limit.count() > 0 ? limit.count() + kMargin : kNoLimit;
}

/// Keeps the complete answer `sent` in the cache, when it is one the cache may keep: the answer
/// of the plan's first route (the one a later request looks up), a success, not a dryrun's.
void keepAnswer(const Services& s, const exchange::RequestContext& ctx, const inference::Plan& plan,
                const CachePlan& cache, const std::string& team_id, const std::string& endpoint,
                const exchange::Transcript& sent) {
  const inference::Route& route = plan.routes.front();
  const std::string variant = route.variant != nullptr ? route.variant->name : std::string();
  if (!sent.complete || sent.status != kStatusOk || ctx.status != kStatusOk ||
      !ctx.error_code.empty() || ctx.served != route.model || ctx.variant != variant) {
    return;
  }
  const std::int64_t now = store::nowMs();
  for (Kept& kept : cache.codec->keep(cache.key, sent, ctx.usage)) {
    s.cache.put(store::CacheEntry{team_id, std::move(kept.key), endpoint, now,
                                  kept.usage.prompt_tokens, kept.usage.completion_tokens,
                                  std::move(kept.body), store::kindsOf(kept.usage)});
  }
}

}  // namespace

boost::asio::awaitable<void> call(const Services& s, exchange::RequestContext& ctx,
                                  const http::Request& req, inference::Plan& plan,
                                  Admission admission, const inference::StartExchange& start,
                                  bool stream, http::ResponseWriter& out) {
  if (fenced(s, ctx)) {
    co_return co_await refuse(ctx, fencedError(), out);
  }
  if (auto refused = noteDryrun(ctx, admission.dryrun)) {
    co_return co_await refuse(ctx, *refused, out);
  }
  const std::string team_id = billedTeam(s, ctx);
  auto idempotency_key = idempotencyKey(req);
  if (!idempotency_key) {
    co_return co_await refuse(ctx, idempotency_key.error(), out);
  }
  // Only a billed request is claimed: the key is about being charged once. A dryrun keeps
  // nothing.
  std::optional<Claim> claim;
  if (*idempotency_key && s.ledger != nullptr && !team_id.empty() && !ctx.dryrun) {
    const ClaimScope scope{team_id, s.gateway_id,
                           ctx.config.cache.idempotency_window_seconds * kMsPerSecond,
                           leaseMs(plan, stream)};
    const std::string digest = admission.digest();
    claim = co_await claimOrAnswer(*s.writer, ctx, scope, **idempotency_key, digest, out);
    if (!claim) {
      co_return;
    }
  }
  const config::Model& first = *plan.routes.front().model;
  if (admission.cache && !mayKeepAnswers(first)) {
    admission.cache.reset();
  }
  if (admission.cache && admission.cache->options.reads()) {
    const auto entry = co_await cached(s, *admission.cache, team_id);
    if (entry) {
      if (claim) {
        co_await release(*s.writer, *claim);  // Nothing is charged: a retry is a hit again.
      }
      const Replay replay = admission.cache->codec->replay(*entry);
      const exchange::TokenUsage usage = store::countsOf(*entry);
      co_return co_await answerFromCache(s, ctx, plan, admission.facts, team_id, replay, usage,
                                         out);
    }
    out.addHeader(std::string(kCacheHeader), "miss");
  }
  // A dryrun reads the cache but never writes it.
  const bool keeps = admission.cache && admission.cache->options.writes() && !ctx.dryrun;
  const std::string endpoint = admission.facts.endpoint;
  // A dryrun is admitted as any request is (balance and hold), then charged nothing.
  auto charge = co_await billing::Charge::admit(s.ledger, ctx, *plan.model, team_id,
                                                admission.max_cost, std::move(admission.facts));
  if (!charge) {
    if (claim) {
      co_await release(*s.writer, *claim);
    }
    co_return co_await refuse(ctx, charge.error(), out);
  }
  for (inference::Route& route : plan.routes) {
    route.pricing = (*charge)->pricingFor(*route.model);
  }
  if (!claim && !keeps) {
    co_return co_await inference::execute(ctx, plan, start, stream, s.upstreams, **charge, out);
  }
  // The answer is recorded as it is sent: for the key's retry, for the cache.
  exchange::Transcript sent;
  http::RecordingWriter recorder(out, sent, claim.has_value());
  if (claim) {
    const bool keep_answer =
        std::all_of(plan.routes.begin(), plan.routes.end(),
                    [](const inference::Route& route) { return mayKeepAnswers(*route.model); });
    (*charge)->completeClaim(claim->key, claim->claim_id, sent, keep_answer);
  }
  co_await inference::execute(ctx, plan, start, stream, s.upstreams, **charge, recorder);
  if (claim && !(*charge)->claimSettled()) {
    co_await release(*s.writer, *claim);  // No settlement committed: the store failed.
  }
  if (keeps) {
    keepAnswer(s, ctx, plan, *admission.cache, team_id, endpoint, sent);
  }
}

}  // namespace tollgate::api
