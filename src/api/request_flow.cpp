#include "api/request_flow.hpp"

namespace tollgate::api {

boost::asio::awaitable<void> refuse(exchange::RequestContext& ctx, const Error& e,
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

namespace {

/// The team billed for the request: the caller's, or open mode's team (empty: none).
std::string billedTeam(const Services& s, const exchange::RequestContext& ctx) {
  return ctx.caller.team_id.empty() ? s.open_team_id : ctx.caller.team_id;
}

/// Marks the exchange a dryrun when the request says so; an error when the gateway or the team
/// refuses them.
std::optional<Error> noteDryrun(exchange::RequestContext& ctx, bool dryrun) {
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

}  // namespace

boost::asio::awaitable<void> call(const Services& s, exchange::RequestContext& ctx,
                                  inference::Plan& plan, Admission admission,
                                  const inference::StartExchange& start, bool stream,
                                  http::ResponseWriter& out) {
  if (auto refused = noteDryrun(ctx, admission.dryrun)) {
    co_return co_await refuse(ctx, *refused, out);
  }
  // A dryrun is admitted as any request is (balance and hold), then charged nothing.
  auto charge = co_await billing::Charge::admit(s.ledger, ctx, *plan.model, billedTeam(s, ctx),
                                                admission.max_cost, std::move(admission.facts));
  if (!charge) {
    co_return co_await refuse(ctx, charge.error(), out);
  }
  for (inference::Route& route : plan.routes) {
    route.pricing = (*charge)->pricingFor(*route.model);
  }
  co_await inference::execute(ctx, plan, start, stream, s.upstreams, **charge, out);
}

}  // namespace tollgate::api
