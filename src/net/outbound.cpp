#include "net/outbound.hpp"

#include <string_view>

namespace tollgate::net {
namespace {

/// How long an unread rest of an answer may take before its connection is closed, not pooled.
constexpr std::chrono::milliseconds kFinishBudget{50};

class PooledOutbound final : public http::OutboundHttp {
 public:
  explicit PooledOutbound(providers::Transport& transport) : transport_(transport) {}

  boost::asio::awaitable<Result<http::OutboundResponse>> send(
      http::OutboundRequest request) override {
    config::Provider service;
    service.name = request.base.host;
    service.api_base = request.base;
    service.connect_timeout = request.timeout;
    service.first_byte_timeout = request.timeout;
    service.total_timeout = request.timeout;
    providers::UpstreamRequest sent;
    sent.method = std::move(request.method);
    sent.path = std::move(request.path);
    sent.headers = std::move(request.headers);
    sent.content_type = std::move(request.content_type);
    sent.body = std::move(request.body);
    auto call = co_await transport_.start(service, std::move(sent));
    if (!call) {
      co_return std::move(call).error();
    }
    auto body = co_await (*call)->readAll(request.max_response_bytes);
    if (!body) {
      co_await (*call)->finish(kFinishBudget);
      co_return std::move(body).error();
    }
    co_return http::OutboundResponse{(*call)->status(), std::string((*call)->contentType()),
                                     std::move(body).value()};
  }

 private:
  providers::Transport& transport_;
};

}  // namespace

std::unique_ptr<http::OutboundHttp> makeOutbound(providers::Transport& transport) {
  return std::make_unique<PooledOutbound>(transport);
}

}  // namespace tollgate::net
