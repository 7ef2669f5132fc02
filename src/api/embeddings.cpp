#include <mutex>
#include <set>

#include "api/handlers.hpp"
#include "billing/pricing.hpp"
#include "cache/cache_key.hpp"
#include "cache/embedding_items.hpp"
#include "core/ids.hpp"
#include "core/log.hpp"
#include "flow/pipeline.hpp"
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
  log::line(log::Level::Warn, "deprecated: embedding model '" + model +
                                  "' named without the tollgate::embedding_model_name:: prefix");
}

}  // namespace

awaitable<void> embeddings(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                           http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  auto request = openai::decodeEmbeddingRequest(*req.body);
  if (!request) {
    co_return co_await flow::refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  auto plan = flow::planFor(ctx.config, request->model_id, config::Endpoint::Embedding);
  if (!plan) {
    co_return co_await flow::refuse(ctx, plan.error(), out);
  }
  if (request->unprefixed) {
    // Known models only: what is logged is a configured id, not whatever a client sends.
    out.addHeader("Deprecation", std::string(kDeprecatedSince));
    logDeprecatedName(plan->model->id);
  }
  const config::Model& model = *plan->model;
  flow::Admission admission{
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
  // The cache, input by input: a batch of which some inputs were found sends the upstream only
  // the others. A request with an Idempotency-Key is sent whole, so that its retry gets exactly
  // the answer first sent.
  openai::CacheOptions options = request->cache;
  if (!req.header("Idempotency-Key").empty()) {
    options.mode =
        options.writes() ? openai::CacheOptions::Mode::WriteOnly : openai::CacheOptions::Mode::Off;
  }
  cache::EmbeddingItems items(*request, s.ledger != nullptr);
  admission.cache = flow::cachePlan(s, ctx, *plan, options, "embedding", request->body,
                                    cache::kEmbeddingIgnored, &items);
  co_await flow::call(s, ctx, req, *plan, std::move(admission), start, false, out);
}

}  // namespace tollgate::api
