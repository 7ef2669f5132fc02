#include "api/handlers.hpp"
#include "core/ids.hpp"
#include "inference/execute.hpp"
#include "inference/plan.hpp"
#include "openai/chat_request.hpp"

namespace tollgate::api {
namespace {

awaitable<void> refuse(http::RequestContext& ctx, const Error& e, http::ResponseWriter& out) {
  ctx.error_code = errorSpec(e.kind).code;
  co_await out.sendError(e);
}

}  // namespace

awaitable<void> chatCompletions(const Services& s, http::RequestContext& ctx, http::Request& req,
                                http::ResponseWriter& out) {
  // Decode: every rule of spec §4.1, §7 and §8; the request points into the body from here on.
  auto request = openai::decodeChatRequest(*req.body);
  if (!request) {
    co_return co_await refuse(ctx, request.error(), out);
  }
  ctx.model = request->model;
  // Plan: which model and providers serve it.
  const auto plan = inference::plan(ctx.config, request->model);
  if (!plan) {
    co_return co_await refuse(ctx, plan.error(), out);
  }
  const openai::ResponseMeta meta{request->model,
                                  request->episode_id.empty() ? ids::uuidV7() : request->episode_id,
                                  request->service_tier,
                                  request->include_raw_usage,
                                  request->include_raw_response,
                                  request->include_usage};
  // Execute and respond: providers in routing order, the first answer relayed as it arrives.
  co_await inference::executeChat(ctx, *plan, *request, meta, s.upstreams, out);
}

}  // namespace tollgate::api
