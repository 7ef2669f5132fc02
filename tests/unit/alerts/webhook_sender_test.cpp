// The webhook sender over a SQLite store's writer and a fake receiver: an event of the outbox is
// POSTed signed, within the timeout and the answer's bound, and recorded delivered on a 2xx; a
// refusal is recorded with its status and the event due again later.
#include "alerts/webhook_sender.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "alerts/alert_event.hpp"
#include "sqlite_store.hpp"
#include "store/writer.hpp"

namespace tollgate::alerts {
namespace {

constexpr std::int64_t kUsd = 1'000'000'000'000;
const std::string kSecret = "whsec_0123456789abcdef";

/// What the fake receiver was sent, and what it answers.
struct Received {
  std::mutex mutex;
  std::vector<http::OutboundRequest> requests;
  int status = 200;
};

class FakeReceiver final : public http::OutboundHttp {
 public:
  explicit FakeReceiver(Received& received) : received_(received) {}
  boost::asio::awaitable<Result<http::OutboundResponse>> send(
      http::OutboundRequest request) override {
    const std::lock_guard lock(received_.mutex);
    received_.requests.push_back(std::move(request));
    co_return http::OutboundResponse{received_.status, "text/plain", "ok"};
  }

 private:
  Received& received_;
};

class WebhookSenderTest : public test::SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    alerts_.webhook_url = config::UpstreamUrl{true, "hooks.example.com", "443", "/t/abc"};
    alerts_.webhook_secret = kSecret;
    // 1 USD, then a settlement of 0.5: below the 0.75 amount.
    db_->topUp(team_, kUsd);
    ASSERT_TRUE(db_->hold({"h", team_, kUsd / 2}, "gw", 0, 0, false).held);
    store::SpendRow row;
    row.request_id = "r";
    row.team_id = team_;
    row.cost = kUsd / 2;
    std::vector<store::Settlement> batch{{"h", row, false}};
    const std::vector<std::int64_t> amounts{3 * kUsd / 4};
    db_->settle(batch, amounts);
    writer_ = std::make_unique<store::Writer>(
        store::Location{store::Engine::Sqlite, dir_.file("t.db")}, store::Writer::Retention{});
  }

  void TearDown() override { writer_.reset(); }

  /// Runs a sender until the event's first attempt is recorded (at most a few seconds), then
  /// stops it.
  void sendOnce() {
    WebhookSender sender(alerts_, *writer_, "gw-1", [this](boost::asio::io_context&) {
      return std::make_unique<FakeReceiver>(received_);
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (stored().attempts == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  /// The event as the store has it.
  store::AlertRow stored() { return db_->listAlerts(team_, 1).at(0); }

  config::Alerts alerts_;
  Received received_;
  std::unique_ptr<store::Writer> writer_;
};

TEST_F(WebhookSenderTest, PostsTheEventSignedAndRecordsItDelivered) {
  sendOnce();
  ASSERT_EQ(received_.requests.size(), 1u);
  const http::OutboundRequest& r = received_.requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.base.host, "hooks.example.com");
  EXPECT_EQ(r.path, "/t/abc");
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.timeout, std::chrono::seconds(10));
  EXPECT_EQ(r.max_response_bytes, 64u * 1024);
  const store::AlertRow e = stored();
  EXPECT_EQ(r.body, eventBody(e));
  std::string header;
  for (const auto& [name, value] : r.headers) {
    if (name == "Tollgate-Signature") {
      header = value;
    }
  }
  ASSERT_TRUE(header.starts_with("t=")) << header;
  const std::int64_t t = std::stoll(header.substr(2, header.find(',') - 2));
  EXPECT_EQ(header, signature(kSecret, t, r.body));
  EXPECT_LE(std::abs(t - store::nowMs() / 1000), 5);
  EXPECT_TRUE(e.delivered_at.has_value());
  EXPECT_EQ(e.attempts, 1);
  EXPECT_EQ(e.last_status, 200);
}

TEST_F(WebhookSenderTest, ARefusalIsRecordedAndTheEventIsDueAgainLater) {
  received_.status = 302;  // A redirect is not followed: not delivered.
  const std::int64_t before = store::nowMs();
  sendOnce();
  ASSERT_EQ(received_.requests.size(), 1u);
  const store::AlertRow e = stored();
  EXPECT_FALSE(e.delivered_at.has_value());
  EXPECT_FALSE(e.failed_at.has_value());
  EXPECT_EQ(e.attempts, 1);
  EXPECT_EQ(e.last_status, 302);
  EXPECT_GE(e.due_at, before + 1000) << "tried again a second later at the soonest";
}

}  // namespace
}  // namespace tollgate::alerts
