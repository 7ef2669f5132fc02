#include <cstdio>
#include <mutex>
#include <set>

#include "api/handlers.hpp"
#include "api/request_flow.hpp"
#include "billing/charge.hpp"
#include "billing/pricing.hpp"
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

awaitable<void> embeddings(const Services& s, http::RequestContext& ctx, http::Request& req,
                           http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  auto request = openai::decodeEmbeddingRequest(*req.body);
  if (!request) {
    co_return co_await refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  const auto plan = planFor(ctx.config, request->model_id, config::Endpoint::Embedding);
  if (!plan) {
    co_return co_await refuse(ctx, plan.error(), out);
  }
  if (request->unprefixed) {
    // Known models only: what is logged is a configured id, not whatever a client sends.
    out.addHeader("Deprecation", std::string(kDeprecatedSince));
    logDeprecatedName(plan->model->id);
  }
  const config::Model& model = *plan->model;
  billing::RequestFacts facts{
      "embedding", ids::uuidV7(),
      billing::spendTags(std::move(request->tags), req.header("User-Agent")), false, body_bytes};
  facts.bound = billing::embeddingBound(body_bytes, request->inputs, model);
  const auto max_cost = billing::maxCost(facts.bound, model);
  if (auto refused = noteDryrun(ctx, request->dryrun)) {
    co_return co_await refuse(ctx, *refused, out);
  }
  auto charge = co_await billing::Charge::admit(s.ledger, ctx, model, billedTeam(s, ctx), max_cost,
                                                std::move(facts));
  if (!charge) {
    co_return co_await refuse(ctx, charge.error(), out);
  }
  request->pricing = (*charge)->pricing();
  const openai::EmbeddingRequest& r = *request;
  const inference::StartExchange start =
      [&r](const providers::Adapter& adapter, const config::Provider& provider,
           const inference::Route&) { return adapter.embed(r, provider); };
  co_await inference::execute(ctx, *plan, start, false, s.upstreams, **charge, out);
}

}  // namespace tollgate::api
