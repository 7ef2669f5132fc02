#include "api/handlers.hpp"
#include "api/request_flow.hpp"
#include "billing/charge.hpp"
#include "billing/pricing.hpp"
#include "core/ids.hpp"
#include "inference/execute.hpp"
#include "openai/rerank_response.hpp"

namespace tollgate::api {

awaitable<void> rerank(const Services& s, http::RequestContext& ctx, http::Request& req,
                       http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  auto request = openai::decodeRerankRequest(*req.body);
  if (!request) {
    co_return co_await refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  const auto plan = planFor(ctx.config, request->model, config::Endpoint::Rerank);
  if (!plan) {
    co_return co_await refuse(ctx, plan.error(), out);
  }
  if (request->texts.empty()) {
    // Nothing to rank: the empty answer, at once and free (no upstream call, no spend row).
    // Built outside the co_await: GCC 12 can destroy temporaries of its operand twice.
    http::Response empty = http::Response::json(
        200, openai::encodeRerank(ids::uuidV7(), {}, *request, std::nullopt, std::nullopt));
    co_await out.send(std::move(empty));
    co_return;
  }
  const config::Model& model = *plan->model;
  billing::RequestFacts facts{
      "rerank", ids::uuidV7(),
      billing::spendTags(std::move(request->tags), req.header("User-Agent")), false, body_bytes};
  facts.bound = billing::rerankBound(body_bytes, request->query.size(), request->texts.size());
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
  const openai::RerankRequest& r = *request;
  const inference::StartExchange start =
      [&r](const providers::Adapter& adapter, const config::Provider& provider,
           const inference::Route&) { return adapter.rerank(r, provider); };
  co_await inference::execute(ctx, *plan, start, false, s.upstreams, **charge, out);
}

}  // namespace tollgate::api
