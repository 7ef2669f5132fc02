#include "api/handlers.hpp"
#include "api/request_flow.hpp"
#include "billing/charge.hpp"
#include "billing/pricing.hpp"
#include "core/ids.hpp"
#include "inference/execute.hpp"
#include "inference/plan.hpp"
#include "inference/variant_request.hpp"
#include "openai/chat_request.hpp"

namespace tollgate::api {

awaitable<void> chatCompletions(const Services& s, http::RequestContext& ctx, http::Request& req,
                                http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  // Decode: every rule of spec §4.1, §7 and §8; the request points into the body from here on.
  auto request = openai::decodeChatRequest(*req.body);
  if (!request) {
    co_return co_await refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  // Every request belongs to an episode: the client's, or a new one (a function's variant draw
  // is seeded by it).
  std::string episode_id = request->episode_id.empty() ? ids::uuidV7() : request->episode_id;
  // Plan: which model (for a function, which variants) and providers serve it.
  const auto plan = planFor(ctx.config, request->model, config::Endpoint::Chat, episode_id,
                            request->variant_name);
  if (!plan) {
    co_return co_await refuse(ctx, plan.error(), out);
  }
  openai::ResponseMeta meta{request->model,
                            std::move(episode_id),
                            request->service_tier,
                            request->include_raw_usage,
                            request->include_raw_response,
                            request->include_usage,
                            std::nullopt,
                            ""};
  // Admit: hold the most this request can cost on its team's balance (a dryrun too, which is then
  // charged nothing): for a function, the most any of its variants can cost as it is sent (its
  // system prompt included).
  if (auto refused = noteDryrun(ctx, request->dryrun)) {
    co_return co_await refuse(ctx, *refused, out);
  }
  const config::Model& model = *plan->model;
  std::string team_id = billedTeam(s, ctx);
  // Named, not a temporary in the co_await expression: GCC 12 mishandles those in coroutines.
  billing::RequestFacts facts{
      "chat", meta.episode_id,
      billing::spendTags(std::move(request->tags), req.header("User-Agent")), request->stream,
      body_bytes};
  std::optional<money::Pico> max_cost = 0;
  facts.bound = {};
  for (const inference::Route& route : plan->routes) {
    const billing::TokenBound bound = billing::chatBound(
        body_bytes + inference::variantPromptBytes(route.variant), request->media_parts,
        inference::outputLimit(*request, route.variant), *route.model);
    facts.bound.prompt = std::max(facts.bound.prompt, bound.prompt);
    facts.bound.completion = std::max(facts.bound.completion, bound.completion);
    const auto cost = billing::maxCost(bound, *route.model);
    max_cost = cost && max_cost ? std::optional(std::max(*cost, *max_cost)) : std::nullopt;
  }
  auto charge = co_await billing::Charge::admit(s.ledger, ctx, model, std::move(team_id), max_cost,
                                                std::move(facts));
  if (!charge) {
    co_return co_await refuse(ctx, charge.error(), out);
  }
  meta.pricing = (*charge)->pricing();
  // Execute and respond: providers in routing order, the first answer relayed as it arrives and
  // settled before its last byte.
  co_await inference::executeChat(ctx, *plan, *request, meta, s.upstreams, **charge, out);
}

}  // namespace tollgate::api
