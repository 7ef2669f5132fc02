// The span exporter: sampled inference exchanges are queued within its bound (the rest dropped
// and counted) and sent in batches through its outbound client, what is left at the latest when
// it stops; unsampled and non-inference exchanges are not.
#include "telemetry/span_exporter.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace tollgate::telemetry {
namespace {

/// What the fake collector was sent, read once the exporter has stopped.
struct Received {
  std::mutex mutex;
  std::vector<http::OutboundRequest> requests;
  int status = 200;
};

class FakeCollector final : public http::OutboundHttp {
 public:
  explicit FakeCollector(Received& received) : received_(received) {}
  boost::asio::awaitable<Result<http::OutboundResponse>> send(
      http::OutboundRequest request) override {
    const std::lock_guard lock(received_.mutex);
    received_.requests.push_back(std::move(request));
    co_return http::OutboundResponse{received_.status, "application/json", "{}"};
  }

 private:
  Received& received_;
};

class SpanExporterTest : public ::testing::Test {
 protected:
  SpanExporterTest() {
    traces_.endpoint = config::UpstreamUrl{true, "otel.example.com", "443", "/v1/traces"};
    traces_.headers = {{"Authorization", "Bearer t"}};
    traces_.max_queue_spans = 2;
    model_.id = "m";
  }

  SpanExporter::MakeOutbound fake() {
    return [this](boost::asio::io_context&) { return std::make_unique<FakeCollector>(received_); };
  }

  /// An ended chat exchange with no upstream attempt (one span), sampled or not.
  std::unique_ptr<exchange::RequestContext> exchange(bool sampled) {
    auto ctx = std::make_unique<exchange::RequestContext>(config_, "req");
    ctx->trace = trace::begin("", "", sampled ? 1.0 : 0.0);
    ctx->path = "/v1/chat/completions";
    ctx->served = &model_;
    ctx->status = 200;
    return ctx;
  }

  /// Every span the fake collector received.
  std::size_t spansReceived() {
    std::size_t n = 0;
    for (const http::OutboundRequest& r : received_.requests) {
      rapidjson::Document d;
      d.Parse(r.body.c_str());
      n += d["resourceSpans"][0]["scopeSpans"][0]["spans"].Size();
    }
    return n;
  }

  config::Config config_;
  config::Model model_;
  config::Traces traces_;
  Received received_;
};

TEST_F(SpanExporterTest, QueuesWithinItsBoundAndSendsWhatIsLeftWhenItStops) {
  {
    SpanExporter exporter(traces_, fake());
    for (int i = 0; i < 3; ++i) {
      exporter.ended(*exchange(true));
    }
    exporter.ended(*exchange(false));  // Not sampled: neither queued nor dropped.
    auto models = exchange(true);
    models->served = nullptr;
    models->path = "/v1/models";
    exporter.ended(*models);  // No inference: no spans.
    EXPECT_EQ(exporter.counts().dropped, 1U);
  }
  ASSERT_EQ(received_.requests.size(), 1U);
  const http::OutboundRequest& sent = received_.requests[0];
  EXPECT_EQ(sent.method, "POST");
  EXPECT_EQ(sent.base.host, "otel.example.com");
  EXPECT_EQ(sent.path, "/v1/traces");
  EXPECT_EQ(sent.content_type, "application/json");
  EXPECT_EQ(sent.headers, traces_.headers);
  EXPECT_EQ(sent.timeout, SpanExporter::kTimeout);
  EXPECT_EQ(spansReceived(), 2U);
}

/// Waits (at most 2 s) until `done` holds.
template <typename Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!done() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

TEST_F(SpanExporterTest, AFullBatchLeavesWithoutWaitingForTheInterval) {
  traces_.max_queue_spans = 4 * SpanExporter::kBatchSpans;
  SpanExporter exporter(traces_, fake());
  for (std::size_t i = 0; i < SpanExporter::kBatchSpans; ++i) {
    exporter.ended(*exchange(true));
  }
  EXPECT_TRUE(eventually([&] { return exporter.counts().sent == SpanExporter::kBatchSpans; }));
  EXPECT_EQ(exporter.counts().dropped, 0U);
  EXPECT_EQ(exporter.counts().failed, 0U);
}

TEST_F(SpanExporterTest, ABatchTheCollectorRefusesIsCountedAsFailed) {
  received_.status = 503;
  traces_.max_queue_spans = 4 * SpanExporter::kBatchSpans;
  SpanExporter exporter(traces_, fake());
  for (std::size_t i = 0; i < SpanExporter::kBatchSpans; ++i) {
    exporter.ended(*exchange(true));
  }
  EXPECT_TRUE(eventually([&] { return exporter.counts().failed == SpanExporter::kBatchSpans; }));
  EXPECT_EQ(exporter.counts().sent, 0U);
}

}  // namespace
}  // namespace tollgate::telemetry
