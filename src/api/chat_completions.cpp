#include "api/handlers.hpp"
#include "billing/pricing.hpp"
#include "cache/cache_key.hpp"
#include "cache/codecs.hpp"
#include "core/ids.hpp"
#include "flow/pipeline.hpp"
#include "inference/execute.hpp"
#include "inference/plan.hpp"
#include "inference/variant_request.hpp"
#include "openai/chat_request.hpp"

namespace tollgate::api {

awaitable<void> chatCompletions(const Services& s, exchange::RequestContext& ctx,
                                http::Request& req, http::ResponseWriter& out) {
  const std::size_t body_bytes = req.body->size();
  // Decode: every rule of spec §4.1, §7 and §8; the request points into the body from here on.
  auto request = openai::decodeChatRequest(*req.body);
  if (!request) {
    co_return co_await flow::refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  // Every request belongs to an episode: the client's, or a new one (a function's variant draw
  // is seeded by it).
  std::string episode_id = request->episode_id.empty() ? ids::uuidV7() : request->episode_id;
  // Plan: which model (for a function, which variants) and providers serve it.
  auto plan = flow::planFor(ctx.config, request->model, config::Endpoint::Chat, episode_id,
                            request->variant_name);
  if (!plan) {
    co_return co_await flow::refuse(ctx, plan.error(), out);
  }
  openai::ResponseMeta meta{request->model,
                            std::move(episode_id),
                            request->service_tier,
                            request->include_raw_usage,
                            request->include_raw_response,
                            request->include_usage,
                            std::nullopt,
                            ""};
  // Bound: the most any route can cost as it is sent (a variant's system prompt included).
  flow::Admission admission{{"chat", meta.episode_id,
                             billing::spendTags(std::move(request->tags), req.header("User-Agent"),
                                                ctx.caller.playground),
                             request->stream, body_bytes},
                            0,
                            request->dryrun};
  admission.facts.bound = {};
  for (const inference::Route& route : plan->routes) {
    if (auto refusal =
            billing::unpricedAudio(request->audio_parts, request->audio_output, *route.model)) {
      co_return co_await flow::refuse(ctx, *refusal, out);
    }
    const billing::TokenBound bound = billing::chatBound(
        body_bytes + inference::variantPromptBytes(route.variant), request->media_parts,
        inference::outputLimit(*request, route.variant), *route.model);
    admission.facts.bound.prompt = std::max(admission.facts.bound.prompt, bound.prompt);
    admission.facts.bound.completion = std::max(admission.facts.bound.completion, bound.completion);
    const auto cost = billing::maxCost(bound, *route.model);
    admission.max_cost = cost && admission.max_cost
                             ? std::optional(std::max(*cost, *admission.max_cost))
                             : std::nullopt;
  }
  const openai::ChatRequest& r = *request;
  admission.digest = [&r] { return cache::requestDigest(r.body); };
  // The cache is not for answers that carry the upstream's raw response or usage.
  cache::ChatAnswerCodec codec(meta, request->stream, s.ledger != nullptr);
  if (request->cache.mode != openai::CacheOptions::Mode::Off && !request->include_raw_usage &&
      !request->include_raw_response) {
    // Keyed as it reaches the upstream: a function's variant with its prompt and parameters, so
    // that a variant changed in the configuration is a new request.
    const config::Variant* variant = plan->routes.front().variant;
    const std::optional<openai::ChatRequest> varied =
        variant != nullptr ? std::optional(inference::withVariant(*request, *variant))
                           : std::nullopt;
    admission.cache =
        flow::cachePlan(s, ctx, *plan, request->cache, "chat",
                        varied ? varied->body : request->body, cache::kChatIgnored, &codec);
  }
  // Call: providers in routing order, the first answer relayed as it arrives and settled before
  // its last byte.
  const inference::StartExchange start = inference::chatExchanges(*request, meta);
  co_await flow::call(s, ctx, req, *plan, std::move(admission), start, request->stream, out);
}

}  // namespace tollgate::api
