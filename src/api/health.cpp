#include "api/handlers.hpp"

namespace tollgate::api {

awaitable<void> health(http::RequestContext&, http::Request&, http::ResponseWriter& out) {
  co_await out.send(http::Response::json(200, R"({"status":"ok"})"));
}

awaitable<void> ready(const Services& s, http::RequestContext&, http::Request&,
                      http::ResponseWriter& out) {
  if (s.draining.load()) {
    const Error draining{ErrorKind::ServiceUnavailable, "shutting down", ""};
    co_await out.sendError(draining);
    co_return;
  }
  co_await out.send(http::Response::json(200, R"({"status":"ready"})"));
}

}  // namespace tollgate::api
