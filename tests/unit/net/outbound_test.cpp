// The OutboundHttp port over a transport: what a handler asks for is what the transport is given
// (the configured address, the request's own time limit for every timeout), and the answer comes
// back whole, whatever its status, or an error past its size limit.
#include "net/outbound.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

namespace tollgate::net {
namespace {

namespace asio = boost::asio;

/// Answers every request with `answer`, remembering what it was asked to send and where.
class RecordingTransport final : public providers::Transport {
 public:
  std::string answer = R"({"keys":[]})";
  int status = 200;
  config::Provider provider;
  providers::UpstreamRequest sent;

  asio::awaitable<Result<std::unique_ptr<providers::UpstreamCall>>> start(
      const config::Provider& p, providers::UpstreamRequest request) override {
    provider = p;
    sent = std::move(request);
    co_return std::make_unique<providers::BufferedCall>(status, "application/json", answer);
  }
};

Result<http::OutboundResponse> send(providers::Transport& transport, http::OutboundRequest r) {
  asio::io_context ioc;
  const auto outbound = makeOutbound(transport);
  std::optional<Result<http::OutboundResponse>> answer;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> { answer.emplace(co_await outbound->send(std::move(r))); },
      asio::detached);
  ioc.run();
  return std::move(*answer);
}

http::OutboundRequest tokenRequest() {
  http::OutboundRequest r;
  r.base = {true, "idp.example.com", "443", "/realms/x"};
  r.method = "POST";
  r.path = "/realms/x/token";
  r.headers = {{"Accept", "application/json"}};
  r.content_type = "application/x-www-form-urlencoded";
  r.body = "grant_type=authorization_code";
  r.timeout = std::chrono::milliseconds(2'500);
  return r;
}

TEST(Outbound, SendsTheRequestToTheConfiguredAddressWithinItsTimeLimit) {
  RecordingTransport t;
  const auto answer = send(t, tokenRequest());
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, 200);
  EXPECT_EQ(answer->content_type, "application/json");
  EXPECT_EQ(answer->body, R"({"keys":[]})");
  EXPECT_TRUE(t.provider.api_base.tls);
  EXPECT_EQ(t.provider.api_base.host, "idp.example.com");
  EXPECT_EQ(t.provider.api_base.port, "443");
  EXPECT_EQ(t.provider.connect_timeout, std::chrono::milliseconds(2'500));
  EXPECT_EQ(t.provider.first_byte_timeout, std::chrono::milliseconds(2'500));
  EXPECT_EQ(t.provider.total_timeout, std::chrono::milliseconds(2'500));
  EXPECT_EQ(t.sent.method, "POST");
  EXPECT_EQ(t.sent.path, "/realms/x/token");
  EXPECT_EQ(t.sent.content_type, "application/x-www-form-urlencoded");
  EXPECT_EQ(t.sent.body, "grant_type=authorization_code");
  ASSERT_EQ(t.sent.headers.size(), 1U);
  EXPECT_EQ(t.sent.headers[0].first, "Accept");
}

TEST(Outbound, AnErrorStatusIsAnAnswerNotAFailure) {
  RecordingTransport t;
  t.status = 400;
  t.answer = R"({"error":"invalid_grant"})";
  const auto answer = send(t, tokenRequest());
  ASSERT_TRUE(answer.ok());
  EXPECT_EQ(answer->status, 400);
  EXPECT_EQ(answer->body, R"({"error":"invalid_grant"})");
}

TEST(Outbound, AnAnswerPastItsSizeLimitIsAnError) {
  RecordingTransport t;
  t.answer = std::string(100, 'x');
  http::OutboundRequest r = tokenRequest();
  r.max_response_bytes = 99;
  const auto answer = send(t, std::move(r));
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().kind, ErrorKind::UpstreamError);
}

}  // namespace
}  // namespace tollgate::net
