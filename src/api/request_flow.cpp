#include "api/request_flow.hpp"

namespace tollgate::api {

boost::asio::awaitable<void> refuse(http::RequestContext& ctx, const Error& e,
                                    http::ResponseWriter& out) {
  ctx.error_code = errorSpec(e.kind).code;
  co_await out.sendError(e);
}

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

std::string billedTeam(const Services& s, const http::RequestContext& ctx) {
  return ctx.caller.team_id.empty() ? s.open_team_id : ctx.caller.team_id;
}

std::optional<Error> noteDryrun(http::RequestContext& ctx, bool dryrun) {
  if (dryrun && !ctx.config.gateway.allow_dryrun) {
    return Error{ErrorKind::DryrunNotAllowed,
                 "this gateway does not take tollgate::dryrun requests; send the request without "
                 "it (it is then billed)",
                 "tollgate::dryrun"};
  }
  if (dryrun && !ctx.caller.team_allows_dryrun) {
    return Error{ErrorKind::DryrunNotAllowed,
                 "the API key's team does not take tollgate::dryrun requests (tollgate admin teams "
                 "dryrun TEAM allow); send the request without it (it is then billed)",
                 "tollgate::dryrun"};
  }
  ctx.dryrun = dryrun;
  return std::nullopt;
}

}  // namespace tollgate::api
