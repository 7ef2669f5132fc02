#include <cstdio>
#include <mutex>
#include <set>

#include "api/embedding_items.hpp"
#include "api/handlers.hpp"
#include "api/request_flow.hpp"
#include "billing/pricing.hpp"
#include "cache/cache_key.hpp"
#include "core/ids.hpp"
#include "inference/execute.hpp"
#include "openai/embedding_request.hpp"

namespace tollgate::api {
namespace {

/// RFC 9745: the unprefixed form is deprecated since the prefixed one arrived (2026-11-23).
constexpr std::string_view kDeprecatedSince = "@1795392000";
/// Names logged as deprecated, at most: a client cannot grow the set without bound.
constexpr std::size_t kMaxLoggedNames = 1024;

/// Logs the first use of each unprefixed embedding model name, once per process.
void logDeprecatedName(const std::string& model) {
  static std::mutex mutex;
  static std::set<std::string> logged;
  const std::lock_guard lock(mutex);
  if (logged.size() >= kMaxLoggedNames || !logged.insert(model).second) {
    return;
  }
  std::fprintf(stderr,
               "tollgate: deprecated: embedding model '%s' named without the "
               "tollgate::embedding_model_name:: prefix\n",
               model.c_str());
}

}  // namespace

awaitable<void> embeddings(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                           http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  auto request = openai::decodeEmbeddingRequest(*req.body);
  if (!request) {
    co_return co_await refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  auto plan = planFor(ctx.config, request->model_id, config::Endpoint::Embedding);
  if (!plan) {
    co_return co_await refuse(ctx, plan.error(), out);
  }
  if (request->unprefixed) {
    // Known models only: what is logged is a configured id, not whatever a client sends.
    out.addHeader("Deprecation", std::string(kDeprecatedSince));
    logDeprecatedName(plan->model->id);
  }
  const config::Model& model = *plan->model;
  Admission admission{
      {"embedding", ids::uuidV7(),
       billing::spendTags(std::move(request->tags), req.header("User-Agent")), false, body_bytes},
      std::nullopt,
      request->dryrun};
  admission.facts.bound = billing::embeddingBound(body_bytes, request->inputs, model);
  admission.max_cost = billing::maxCost(admission.facts.bound, model);
  openai::EmbeddingRequest& r = *request;
  admission.digest = [&r] { return cache::requestDigest(r.body); };
  const inference::StartExchange start = [&r](const providers::Adapter& adapter,
                                              const config::Provider& provider,
                                              const inference::Route& route) {
    r.pricing = route.pricing;
    return adapter.embed(r, provider);
  };
  auto cache = cachePlan(s, ctx, *plan, request->cache, "embedding", request->body,
                         cache::kEmbeddingIgnored, nullptr);
  if (!cache || !mayKeepAnswers(model)) {
    co_return co_await call(s, ctx, req, *plan, std::move(admission), start, false, out);
  }
  // The cache, input by input. Its reads are made here, before the call; a request with an
  // Idempotency-Key is sent whole, so that its retry gets exactly the answer first sent.
  EmbeddingItems items(request->body, cache->key, s.ledger != nullptr);
  if (request->cache.reads() && req.header("Idempotency-Key").empty()) {
    if (auto refused = noteDryrun(ctx, request->dryrun)) {
      co_return co_await refuse(ctx, *refused, out);
    }
    const std::string team_id = billedTeam(s, ctx);
    auto found =
        co_await s.cache.find(team_id, items.keys(), request->cache.notBefore(store::nowMs()));
    items.found(std::move(found));
    if (items.allFound()) {
      const Replay replay{false, "application/json", items.answer(request->model)};
      const exchange::TokenUsage usage = items.foundUsage();
      co_return co_await answerFromCache(s, ctx, *plan, admission.facts, team_id, replay, usage,
                                         out);
    }
    out.addHeader(std::string(kCacheHeader), items.anyFound() ? "partial" : "miss");
    items.narrow(*request);
  }
  if (request->cache.writes()) {
    cache->options.mode = openai::CacheOptions::Mode::WriteOnly;  // Read above.
    cache->codec = &items;
    admission.cache = std::move(cache);
  }
  if (!items.anyFound()) {
    co_return co_await call(s, ctx, req, *plan, std::move(admission), start, false, out);
  }
  MergingWriter merged(out, items);
  co_await call(s, ctx, req, *plan, std::move(admission), start, false, merged);
}

}  // namespace tollgate::api
