#include "flow/refuse.hpp"

namespace tollgate::flow {

boost::asio::awaitable<void> refuse(exchange::RequestContext& ctx, const Error& e,
                                    http::ResponseWriter& out) {
  ctx.error_code = errorSpec(e.kind).code;
  co_await out.sendError(e);
}

}  // namespace tollgate::flow
