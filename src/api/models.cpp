#include "openai/models.hpp"

#include "api/handlers.hpp"
#include "core/text.hpp"

namespace tollgate::api {
namespace {

awaitable<void> respond(exchange::RequestContext& ctx, Result<std::string> body,
                        http::ResponseWriter& out) {
  if (!body) {
    ctx.error_code = errorSpec(body.error().kind).code;
    co_await out.sendError(body.error());
    co_return;
  }
  co_await out.send(http::Response::json(200, std::move(body).value()));
}

}  // namespace

awaitable<void> listModels(exchange::RequestContext& ctx, http::Request& req,
                           http::ResponseWriter& out) {
  co_await respond(ctx, openai::listModels(ctx.config, req.query, ctx.caller.allowed_models.get()),
                   out);
}

awaitable<void> retrieveModel(exchange::RequestContext& ctx, http::Request& req,
                              http::ResponseWriter& out) {
  // SDKs percent-encode the id (a slash-style id arrives as one segment with %2F).
  const auto id = text::percentDecode(req.params.get("id"));
  ctx.model = id.value_or(std::string(req.params.get("id")));
  co_await respond(
      ctx, openai::retrieveModel(ctx.config, ctx.model, ctx.caller.allowed_models.get()), out);
}

}  // namespace tollgate::api
