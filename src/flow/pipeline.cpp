#include "flow/pipeline.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>

#include "cache/cache_key.hpp"
#include "config/limits_config.hpp"
#include "core/key_rules.hpp"
#include "core/lease.hpp"
#include "core/usage.hpp"
#include "flow/claim.hpp"
#include "http/recording_writer.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::flow {
namespace {

constexpr std::int64_t kMsPerSecond = 1000;
constexpr int kStatusOk = 200;

/// What the stages of one call share: its services, request, plan and admission, and the team
/// billed for it.
struct Call {
  const Services& s;
  exchange::RequestContext& ctx;
  const http::Request& req;
  inference::Plan& plan;
  Admission& admission;
  const inference::StartExchange& start;
  const bool stream;
  http::ResponseWriter& out;
  std::string team_id;   ///< The caller's team, or open mode's (empty: none, unbilled).
  std::string endpoint;  ///< The facts' endpoint, which the hold takes with the facts.
  /// What the request took of its rate limits, and where it stands on each (its headers).
  limits::Taken limited;
  std::vector<limits::Standing> standings;
};

bool mayKeepAnswers(const config::Model& model) { return !model.zdr && !model.tee; }

/// Gives the exchange the gateway's lease (admitted in the epoch its key was checked in), and says
/// whether it has run out since: the request is then refused (503 gateway_fenced), and nothing of
/// it may be sent, upstream or to the client.
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

/// How long a claim of a request on `plan` may be running: the request's deadline (its first
/// route's total time limit, see inference::execute) and a minute more; an hour when it has none.
std::int64_t leaseMs(const inference::Plan& plan, bool stream) {
  constexpr std::int64_t kMargin = 60'000;
  constexpr std::int64_t kNoLimit = 3'600'000;
  const config::Timeouts& t = plan.routes.front().timeouts;
  const auto limit = stream ? t.streaming_total : t.non_streaming_total;
  return limit.count() > 0 ? limit.count() + kMargin : kNoLimit;
}

// The stages, in the order call() runs them. A stage that answers the client says so (false, or
// an empty result), and the call ends there. A check that needs no I/O says what it refuses, if
// anything, without being a coroutine of its own: most requests pass every one, and a coroutine
// costs a frame and a resumption even when it never waits.

/// Dryrun rules, behind the fence: a fenced gateway serves nothing; a dryrun is taken only when
/// the gateway and the caller's team take them.
std::optional<Error> dryrunRefusal(Call& c) {
  if (fenced(c.s, c.ctx)) {
    return fencedError();
  }
  if (c.admission.dryrun && !c.ctx.config.gateway.allow_dryrun) {
    return Error{ErrorKind::DryrunNotAllowed,
                 "this gateway does not take tollgate::dryrun requests; send the request "
                 "without it (it is then billed)",
                 "tollgate::dryrun"};
  }
  if (c.admission.dryrun && !c.ctx.caller.team_allows_dryrun) {
    return Error{ErrorKind::DryrunNotAllowed,
                 "the API key's team does not take tollgate::dryrun requests (tollgate admin "
                 "teams dryrun TEAM allow); send the request without it (it is then billed)",
                 "tollgate::dryrun"};
  }
  c.ctx.dryrun = c.admission.dryrun;
  return std::nullopt;
}

/// The key's own rules: only a model it allows, before anything could answer from the cache
/// (a cached answer of another model is never served to it) or claim its Idempotency-Key.
std::optional<Error> keyRefusal(const Call& c) {
  const auto& allowed = c.ctx.caller.allowed_models;
  if (allowed == nullptr || key_rules::modelAllowed(*allowed, c.ctx.model)) {
    return std::nullopt;
  }
  return Error{ErrorKind::ModelNotAllowed,
               "This API key may not use the model '" + c.ctx.model +
                   "'. GET /v1/models lists the models it may use.",
               "model"};
}

/// Counts the request against `asks` (not empty): refused (429, or 503 when the store cannot
/// grant a share) when one does not fit, nothing then taken. Every answer carries the
/// x-ratelimit headers of the limits asked so far.
boost::asio::awaitable<bool> countAgainst(Call& c, const std::vector<limits::Ask>& asks,
                                          std::optional<ClaimGuard>* claim = nullptr) {
  limits::Admission admitted = co_await c.s.limiter->admit(asks);
  c.standings.insert(c.standings.end(), admitted.standings.begin(), admitted.standings.end());
  for (auto& [name, value] : limits::rateLimitHeaders(c.standings, admitted.refused.has_value())) {
    c.out.setHeader(std::move(name), std::move(value));
  }
  if (!admitted.refused) {
    c.limited.merge(std::move(admitted.taken));
    co_return true;
  }
  if (admitted.retry_after) {
    c.out.setHeader("Retry-After", std::to_string(*admitted.retry_after));
  }
  c.limited.giveAllBack();
  if (claim != nullptr && *claim) {
    co_await (*claim)->release();  // A retry once the limit allows it is not "in use".
  }
  const Error refused = *admitted.refused;
  co_await refuse(c.ctx, refused, c.out);
  co_return false;
}

/// Who a limit counts: a scope's prefix ("key:", "team:", ...) and its id. The limit's name is
/// written only for a limit that is set: most requests have none, and pay for no string.
struct LimitScope {
  std::string_view prefix;
  std::string_view id;
};

/// The limits of one scope that apply to a request, those of `kinds` (its own, else the
/// configured defaults), as asks of `amount` tokens for a tpm limit.
void addAsks(std::vector<limits::Ask>& asks, const config::Limits& l, LimitScope scope,
             std::initializer_list<limits::Kind> kinds, std::int64_t tokens,
             std::array<ErrorKind, 3> refusals) {
  for (const limits::Kind kind : kinds) {
    const std::optional<std::int64_t>& value = kind == limits::Kind::Requests ? l.rpm
                                               : kind == limits::Kind::Tokens ? l.tpm
                                                                              : l.concurrent;
    if (!value) {
      continue;
    }
    const std::string_view suffix = kind == limits::Kind::Requests ? ":rpm"
                                    : kind == limits::Kind::Tokens ? ":tpm"
                                                                   : ":concurrent";
    std::string name;
    name.reserve(scope.prefix.size() + scope.id.size() + suffix.size());
    name.append(scope.prefix).append(scope.id).append(suffix);
    asks.push_back({std::move(name), kind, *value, kind == limits::Kind::Tokens ? tokens : 1,
                    refusals[static_cast<std::size_t>(kind)]});
  }
}

constexpr std::array kKeyRefusals{ErrorKind::KeyRpmExceeded, ErrorKind::KeyTpmExceeded,
                                  ErrorKind::KeyConcurrencyExceeded};
constexpr std::array kTeamRefusals{ErrorKind::TeamRpmExceeded, ErrorKind::TeamTpmExceeded,
                                   ErrorKind::TeamConcurrencyExceeded};
constexpr std::array kModelRefusals{ErrorKind::ModelRpmExceeded, ErrorKind::ModelTpmExceeded,
                                    ErrorKind::ModelRpmExceeded};

/// The id of the caller's key limits: its public id, or in open mode (no key) its source; none
/// for the console's playground, which counts toward its team's and the model's limits only.
std::optional<LimitScope> keyLimitId(const Call& c) {
  if (c.ctx.caller.playground) {
    return std::nullopt;
  }
  return c.ctx.caller.key_public_id.empty() ? LimitScope{"source:", c.req.source}
                                            : LimitScope{"key:", c.ctx.caller.key_public_id};
}

/// Each of `own` that is set, else `fallback`'s.
config::Limits orDefault(const config::Limits& own, const config::Limits& fallback) {
  return {own.rpm ? own.rpm : fallback.rpm, own.tpm ? own.tpm : fallback.tpm,
          own.concurrent ? own.concurrent : fallback.concurrent};
}

/// The limits of the caller's key (its own, else [limits.key]) and team (likewise).
config::LimitDefaults callerLimits(const Call& c) {
  const config::LimitDefaults& d = c.ctx.config.limits;
  return {orDefault(c.ctx.caller.key_limits, d.key), orDefault(c.ctx.caller.team_limits, d.team)};
}

/// Request limits: a key's and a team's requests and concurrency, counted for every request,
/// cache hits and replays included. What countAgainst() is to count; none without a limiter.
std::vector<limits::Ask> requestAsks(const Call& c) {
  std::vector<limits::Ask> asks;
  if (c.s.limiter == nullptr) {
    return asks;
  }
  const config::LimitDefaults d = callerLimits(c);
  if (const auto key = keyLimitId(c)) {
    addAsks(asks, d.key, *key, {limits::Kind::Requests, limits::Kind::Concurrent}, 0, kKeyRefusals);
  }
  if (!c.team_id.empty()) {
    addAsks(asks, d.team, {"team:", c.team_id}, {limits::Kind::Requests, limits::Kind::Concurrent},
            0, kTeamRefusals);
  }
  return asks;
}

/// The Idempotency-Key to claim, if any (or why it is refused): only a billed request's key is
/// claimed, as the key is about being charged once (a dryrun keeps nothing).
Result<std::optional<std::string>> keyToClaim(const Call& c) {
  auto key = idempotencyKey(c.req);
  if (key && *key && (c.s.ledger == nullptr || c.team_id.empty() || c.ctx.dryrun)) {
    return std::optional<std::string>();
  }
  return key;
}

/// The cache read, when the request's cache plan reads: a hit answers the request (charged nothing,
/// its spend row marked a hit, the claim released so that a retry is a hit again); a partial read
/// narrows it to what was not found. True when it answered.
boost::asio::awaitable<bool> cacheRead(Call& c, std::optional<ClaimGuard>& claim) {
  std::optional<cache::CachePlan>& cache = c.admission.cache;
  auto entries = co_await c.s.cache.find(c.team_id, cache->codec->lookup(cache->key),
                                         cache->options.notBefore(store::nowMs()));
  const std::optional<cache::Hit> hit = cache->codec->found(std::move(entries));
  if (!hit) {
    const bool partial = cache->codec->partial();
    c.ctx.cache = partial ? exchange::CacheOutcome::Partial : exchange::CacheOutcome::Miss;
    c.out.addHeader(std::string(kCacheHeader), partial ? "partial" : "miss");
    co_return false;
  }
  c.ctx.cache = exchange::CacheOutcome::Hit;
  if (claim) {
    co_await claim->release();
  }
  if (fenced(c.s, c.ctx)) {
    co_await refuse(c.ctx, fencedError(), c.out);  // Kept for a key that may be revoked.
    co_return true;
  }
  const inference::Route& route = c.plan.routes.front();
  c.ctx.served = route.model;
  c.ctx.variant = route.variant != nullptr ? route.variant->name : std::string();
  c.ctx.usage = hit->usage;
  http::Response r = hit->replay.streamed ? http::Response::eventStream() : http::Response();
  r.content_type = hit->replay.content_type;
  r.header(std::string(kCacheHeader), "hit");
  r.body = hit->replay.body;
  co_await c.out.sendKept(std::move(r), hit->replay.streamed);
  billing::recordCacheHit(c.s.ledger, c.ctx, c.team_id, *route.model, c.admission.facts);
  co_return true;
}

/// The most tokens a request can use, as its hold counts them; 0 when its hold is not counted in
/// tokens (a transcription's audio), which no tpm limit then counts.
std::int64_t tokenBound(const billing::TokenBound& b) {
  if (b.prompt == billing::kNoTokenBound.prompt ||
      b.completion == billing::kNoTokenBound.completion) {
    return 0;
  }
  return std::min(b.prompt, config::kMaxLimit) + std::min(b.completion, config::kMaxLimit);
}

/// Token and model limits, counted only for work that goes upstream: a key's and a team's tokens
/// (the request's bound, the unused part returned when it settles), the model's requests and
/// tokens, fleet-wide, and the key's budget (its hold; 403 key_budget_exhausted). A cache hit
/// is counted against none of them. What countAgainst() is to count; none without a limiter.
std::vector<limits::Ask> tokenAsks(Call& c) {
  std::vector<limits::Ask> asks;
  if (c.s.limiter == nullptr) {
    return asks;
  }
  const config::LimitDefaults d = callerLimits(c);
  const std::int64_t tokens = tokenBound(c.admission.facts.bound);
  const std::initializer_list<limits::Kind> tpm{limits::Kind::Tokens};
  if (tokens > 0) {
    if (const auto key = keyLimitId(c)) {
      addAsks(asks, d.key, *key, tpm, tokens, kKeyRefusals);
    }
    if (!c.team_id.empty()) {
      addAsks(asks, d.team, {"team:", c.team_id}, tpm, tokens, kTeamRefusals);
    }
  }
  const config::Model& model = *c.plan.model;
  addAsks(asks, model.limits, {"model:", model.id}, {limits::Kind::Requests}, 0, kModelRefusals);
  if (tokens > 0) {
    addAsks(asks, model.limits, {"model:", model.id}, tpm, tokens, kModelRefusals);
  }
  // The key's budget, held like the balance: its most, the unspent part given back when it
  // settles. Only a billed request spends it.
  const auto& budget = c.ctx.caller.budget;
  if (budget && c.s.ledger != nullptr && !c.team_id.empty() && c.admission.max_cost) {
    const auto [start, ends] = key_rules::budgetWindowAt(budget->window, c.s.limiter->nowMs());
    c.ctx.budget_window_start = start;  // Charged to the window it is admitted in.
    asks.push_back({"budget:" + c.ctx.caller.key_public_id + ":" +
                        std::string(key_rules::budgetWindowName(budget->window)),
                    limits::Kind::Spend, budget->pico_usd, *c.admission.max_cost,
                    ErrorKind::KeyBudgetExhausted, limits::Window{start, ends}});
  }
  return asks;
}

/// The hold: the request's most on the team's balance (a dryrun's too, then charged nothing),
/// and each route's prices. Null when refused (the claim released first).
boost::asio::awaitable<std::unique_ptr<billing::Charge>> hold(Call& c,
                                                              std::optional<ClaimGuard>& claim) {
  auto charge = co_await billing::Charge::admit(c.s.ledger, c.ctx, *c.plan.model, c.team_id,
                                                c.admission.max_cost, std::move(c.admission.facts));
  if (!charge) {
    if (claim) {
      co_await claim->release();
    }
    co_await refuse(c.ctx, charge.error(), c.out);
    co_return nullptr;
  }
  for (inference::Route& route : c.plan.routes) {
    route.pricing = (*charge)->pricingFor(*route.model);
  }
  co_return std::move(*charge);
}

/// Gives back what the request did not use of its token bounds (its tokens counted saturating:
/// an upstream's counts are untrusted) and its budget (its charge).
void settleLimits(Call& c) { c.limited.settle(usage::total(c.ctx.usage), c.ctx.cost); }

/// A charge's settlement, then its limits': what the request did not use of its token bounds and
/// budget goes back once its charge is committed, before its last byte leaves, so that the
/// client's next request finds it.
class LimitedSettlement final : public exchange::Settlement {
 public:
  LimitedSettlement(exchange::Settlement& charge, Call& c) : charge_(charge), c_(c) {}

  boost::asio::awaitable<bool> settle(const exchange::Produced& produced) override {
    const bool settled = co_await charge_.settle(produced);
    settleLimits(c_);
    co_return settled;
  }

 private:
  exchange::Settlement& charge_;
  Call& c_;
};

/// Whether the answer is kept in the cache: a dryrun reads the cache but never writes it.
bool keeps(const Call& c) {
  return c.admission.cache && c.admission.cache->options.writes() && !c.ctx.dryrun;
}

/// Execute: the attempts and the relay, settled by `charge`; the answer recorded as it is sent
/// (into `sent`) when the claim or the cache needs it.
boost::asio::awaitable<void> execute(Call& c, billing::Charge& charge,
                                     std::optional<ClaimGuard>& claim, exchange::Transcript& sent) {
  http::ResponseWriter& out = c.admission.cache ? c.admission.cache->codec->writer(c.out) : c.out;
  LimitedSettlement settlement(charge, c);
  if (!claim && !keeps(c)) {
    co_return co_await inference::execute(c.ctx, c.plan, c.start, c.stream, c.s.upstreams,
                                          settlement, out);
  }
  http::RecordingWriter recorder(out, sent, claim.has_value());
  if (claim) {
    const bool keep_answer =
        std::all_of(c.plan.routes.begin(), c.plan.routes.end(),
                    [](const inference::Route& route) { return mayKeepAnswers(*route.model); });
    claim->settleWith(charge, sent, keep_answer);
  }
  co_await inference::execute(c.ctx, c.plan, c.start, c.stream, c.s.upstreams, settlement,
                              recorder);
  if (claim) {
    co_await claim->release();  // Only when no settlement committed: the store failed.
  }
}

/// Keep: the complete answer `sent` in the cache, when it is one the cache may keep: the answer
/// of the plan's first route (the one a later request looks up), a success, not a dryrun's.
void keep(const Call& c, const exchange::Transcript& sent) {
  if (!keeps(c)) {
    return;
  }
  const cache::CachePlan& cache = *c.admission.cache;
  const inference::Route& route = c.plan.routes.front();
  const std::string variant = route.variant != nullptr ? route.variant->name : std::string();
  if (!sent.complete || sent.status != kStatusOk || c.ctx.status != kStatusOk ||
      !c.ctx.error_code.empty() || c.ctx.served != route.model || c.ctx.variant != variant) {
    return;
  }
  const std::int64_t now = store::nowMs();
  for (cache::Kept& kept : cache.codec->keep(cache.key, sent, c.ctx.usage)) {
    c.s.cache.put(store::CacheEntry{c.team_id, std::move(kept.key), c.endpoint, now,
                                    kept.usage.prompt_tokens, kept.usage.completion_tokens,
                                    std::move(kept.body), store::kindsOf(kept.usage)});
  }
}

/// The team billed for the request: the caller's, or open mode's team (empty: none).
std::string billedTeam(const Services& s, const exchange::RequestContext& ctx) {
  return ctx.caller.team_id.empty() ? s.open_team_id : ctx.caller.team_id;
}

}  // namespace

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

std::optional<cache::CachePlan> cachePlan(const Services& s, const exchange::RequestContext& ctx,
                                          const inference::Plan& plan,
                                          const openai::CacheOptions& options,
                                          std::string_view endpoint, const rapidjson::Value& body,
                                          std::span<const std::string_view> ignored,
                                          cache::CacheCodec* codec) {
  if (options.mode == openai::CacheOptions::Mode::Off) {
    return std::nullopt;
  }
  const inference::Route& route = plan.routes.front();
  const std::string team_id = billedTeam(s, ctx);
  const cache::KeyParts parts{team_id, endpoint, route.model->id,
                              route.variant != nullptr ? route.variant->name : std::string_view(),
                              ignored};
  return cache::CachePlan{options, cache::requestKey(parts, body), codec};
}

boost::asio::awaitable<void> call(const Services& s, exchange::RequestContext& ctx,
                                  const http::Request& req, inference::Plan& plan,
                                  Admission admission, const inference::StartExchange& start,
                                  bool stream, http::ResponseWriter& out) {
  Call c{s,
         ctx,
         req,
         plan,
         admission,
         start,
         stream,
         out,
         billedTeam(s, ctx),
         admission.facts.endpoint,
         {},
         {}};
  // However the call ends, its token limits and budget keep only what it used and cost
  // (nothing when refused).
  struct SettleLimits {
    Call& c;
    ~SettleLimits() { settleLimits(c); }
  } settle_limits{c};
  std::optional<Error> refused = dryrunRefusal(c);
  if (!refused) {
    refused = keyRefusal(c);
  }
  if (refused) {
    co_await refuse(c.ctx, *refused, c.out);
    co_return;
  }
  const std::vector<limits::Ask> request_asks = requestAsks(c);
  if (!request_asks.empty() && !co_await countAgainst(c, request_asks)) {
    co_return;
  }
  const auto key = keyToClaim(c);
  if (!key) {
    co_await refuse(c.ctx, key.error(), c.out);
    co_return;
  }
  // The claim, when the request carries an Idempotency-Key; a replay or a refusal answers it.
  std::optional<ClaimGuard> claim;
  if (*key) {
    const ClaimScope scope{c.team_id, c.s.gateway_id,
                           c.ctx.config.cache.idempotency_window_seconds * kMsPerSecond,
                           leaseMs(c.plan, c.stream)};
    auto claimed =
        co_await claimOrAnswer(*c.s.writer, c.ctx, scope, **key, c.admission.digest(), c.out);
    if (!claimed) {
      co_return;
    }
    claim.emplace(std::move(*claimed));
  }
  std::optional<cache::CachePlan>& cache = c.admission.cache;
  if (cache && !mayKeepAnswers(*c.plan.routes.front().model)) {
    cache.reset();
  }
  if (cache && cache->options.reads() && co_await cacheRead(c, claim)) {
    co_return;
  }
  const std::vector<limits::Ask> token_asks = tokenAsks(c);
  if (!token_asks.empty() && !co_await countAgainst(c, token_asks, &claim)) {
    co_return;
  }
  const std::unique_ptr<billing::Charge> charge = co_await hold(c, claim);
  if (!charge) {
    co_return;
  }
  exchange::Transcript sent;
  co_await execute(c, *charge, claim, sent);
  keep(c, sent);
}

}  // namespace tollgate::flow
