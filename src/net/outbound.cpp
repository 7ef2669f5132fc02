#include "net/outbound.hpp"

#include <string_view>

#include "net/upstream_pool.hpp"

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

/// A PooledOutbound over a pool it owns.
class OwnPoolOutbound final : public http::OutboundHttp {
 public:
  explicit OwnPoolOutbound(boost::asio::io_context& ioc)
      : pool_(makeUpstreamPool(ioc)), outbound_(*pool_) {}
  ~OwnPoolOutbound() override { pool_->close(); }
  OwnPoolOutbound(const OwnPoolOutbound&) = delete;
  OwnPoolOutbound& operator=(const OwnPoolOutbound&) = delete;

  boost::asio::awaitable<Result<http::OutboundResponse>> send(
      http::OutboundRequest request) override {
    return outbound_.send(std::move(request));
  }

 private:
  std::unique_ptr<UpstreamPool> pool_;
  PooledOutbound outbound_;
};

}  // namespace

std::unique_ptr<http::OutboundHttp> makeOwnOutbound(boost::asio::io_context& ioc) {
  return std::make_unique<OwnPoolOutbound>(ioc);
}

std::unique_ptr<http::OutboundHttp> makeOutbound(providers::Transport& transport) {
  return std::make_unique<PooledOutbound>(transport);
}

}  // namespace tollgate::net
