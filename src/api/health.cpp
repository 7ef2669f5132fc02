#include "api/handlers.hpp"

namespace tollgate::api {

awaitable<void> health(exchange::RequestContext&, http::Request&, http::ResponseWriter& out) {
  co_await out.send(http::Response::json(200, R"({"status":"ok"})"));
}

awaitable<void> ready(const Services& s, exchange::RequestContext& ctx, http::Request&,
                      http::ResponseWriter& out) {
  if (s.draining.load()) {
    const Error draining{ErrorKind::ServiceUnavailable, "shutting down", ""};
    co_await out.sendError(draining);
    co_return;
  }
  if (s.lease != nullptr && !s.lease->holds(Lease::Clock::now())) {
    co_await out.sendError(fencedError());
    co_return;
  }
  // Which configuration serves (docs/operating.md: reload), and each provider's circuit breaker,
  // so that an operator sees which upstreams are being skipped.
  http::Response answer = http::Response::json(
      200, R"({"status":"ready","config":")" + ctx.config.hash + R"(","providers":)" +
               s.upstreams.breakers.statusJson(ctx.config, std::chrono::steady_clock::now()) + "}");
  co_await out.send(std::move(answer));
}

}  // namespace tollgate::api
