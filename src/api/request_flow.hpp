// The steps every inference handler shares: refusing with the catalogue's error, planning for an
// endpoint (404 for an unknown model, 400 for a model of another endpoint), and choosing the team
// a request is billed to.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <string>
#include <string_view>

#include "api/services.hpp"
#include "core/result.hpp"
#include "http/request_context.hpp"
#include "http/writer.hpp"
#include "inference/plan.hpp"

namespace tollgate::api {

/// Answers `e`, recording its code for the access log.
boost::asio::awaitable<void> refuse(http::RequestContext& ctx, const Error& e,
                                    http::ResponseWriter& out);

/// The plan for `model` on `endpoint` (see inference::plan): model_not_found as for chat, or
/// model_wrong_endpoint when the model serves another endpoint.
Result<inference::Plan> planFor(const config::Config& config, std::string_view model,
                                config::Endpoint endpoint, std::string_view episode_id = {},
                                std::string_view variant_name = {});

/// The team billed for the request: the caller's, or open mode's team (empty: none). A dryrun
/// is admitted on it as any request is (balance and hold), then charged and recorded nothing.
std::string billedTeam(const Services& s, const http::RequestContext& ctx);

/// Marks the exchange a dryrun when the request says so; an error when the gateway refuses them
/// ([gateway] allow_dryrun = false).
std::optional<Error> noteDryrun(http::RequestContext& ctx, bool dryrun);

}  // namespace tollgate::api
