#include "telemetry/metrics_route.hpp"

#include "http/writer.hpp"
#include "telemetry/metrics_access.hpp"

namespace tollgate::telemetry {
namespace {

constexpr std::size_t kNoBody = 0;

}  // namespace

http::Route metricsRoute(const Metrics& metrics, const routing::Breakers& breakers) {
  return {http::Method::Get,
          "/metrics",
          http::Access::Public,
          kNoBody,
          {},
          [&metrics, &breakers](exchange::RequestContext& ctx, http::Request& req,
                                http::ResponseWriter& out) -> boost::asio::awaitable<void> {
            if (!mayScrape(ctx.config.metrics, req.source, req.header("Authorization"))) {
              ctx.route = {};  // Recorded as what it answers: a path no route serves.
              co_await out.sendError(http::routeNotFound(req.path));
              co_return;
            }
            http::Response r;
            r.content_type = "text/plain; version=0.0.4; charset=utf-8";
            r.body = metrics.scrape(ctx.config, breakers);
            co_await out.send(std::move(r));
          }};
}

}  // namespace tollgate::telemetry
