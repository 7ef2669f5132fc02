#include "api/handlers.hpp"
#include "billing/pricing.hpp"
#include "cache/cache_key.hpp"
#include "cache/codecs.hpp"
#include "core/ids.hpp"
#include "flow/pipeline.hpp"
#include "inference/execute.hpp"
#include "openai/rerank_response.hpp"

namespace tollgate::api {

awaitable<void> rerank(const Services& s, exchange::RequestContext& ctx, http::Request& req,
                       http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  auto request = openai::decodeRerankRequest(*req.body);
  if (!request) {
    co_return co_await flow::refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  auto plan = flow::planFor(ctx.config, request->model, config::Endpoint::Rerank);
  if (!plan) {
    co_return co_await flow::refuse(ctx, plan.error(), out);
  }
  if (request->texts.empty()) {
    // Nothing to rank: the empty answer, at once and free (no upstream call, no spend row).
    // Built outside the co_await: GCC 12 can destroy temporaries of its operand twice.
    http::Response empty = http::Response::json(
        200, openai::encodeRerank(ids::uuidV7(), {}, *request, std::nullopt, std::nullopt));
    co_await out.send(std::move(empty));
    co_return;
  }
  flow::Admission admission{
      {"rerank", ids::uuidV7(),
       billing::spendTags(std::move(request->tags), req.header("User-Agent")), false, body_bytes},
      std::nullopt,
      request->dryrun};
  admission.facts.bound =
      billing::rerankBound(body_bytes, request->query.size(), request->texts.size());
  admission.max_cost = billing::maxCost(admission.facts.bound, *plan->model);
  openai::RerankRequest& r = *request;
  admission.digest = [&r] { return cache::requestDigest(r.body); };
  cache::JsonAnswerCodec codec(s.ledger != nullptr);
  admission.cache = flow::cachePlan(s, ctx, *plan, request->cache, "rerank", request->body,
                                    cache::kRerankIgnored, &codec);
  const inference::StartExchange start = [&r](const providers::Adapter& adapter,
                                              const config::Provider& provider,
                                              const inference::Route& route) {
    r.pricing = route.pricing;
    return adapter.rerank(r, provider);
  };
  co_await flow::call(s, ctx, req, *plan, std::move(admission), start, false, out);
}

}  // namespace tollgate::api
