// The span exporter: an exchange Observer that sends the spans of sampled inference exchanges
// to an OpenTelemetry collector over OTLP/HTTP (JSON). On the I/O thread that ends an exchange it
// only copies what the spans say into a bounded queue (dropping, and counting, what does not
// fit) and returns; a thread of its own, with its own event loop and outbound HTTP client, sends
// batches of up to kBatchSpans every kInterval (sooner when a batch is full), each within
// kTimeout. A slow or absent collector costs spans, never a request's time.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "config/config.hpp"
#include "exchange/observer.hpp"
#include "http/outbound.hpp"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tollgate::telemetry {

class SpanExporter final : public exchange::Observer {
 public:
  static constexpr std::size_t kBatchSpans = 512;
  static constexpr std::chrono::seconds kInterval{5};
  static constexpr std::chrono::seconds kTimeout{10};

  /// Makes the client batches are sent with, on the exporter's own event loop.
  using MakeOutbound =
      std::function<std::unique_ptr<http::OutboundHttp>(boost::asio::io_context& ioc)>;

  /// What became of the spans handed to the exporter, since it started.
  struct Counts {
    std::uint64_t sent = 0;     ///< Accepted by the collector.
    std::uint64_t dropped = 0;  ///< Not queued: the queue was full.
    std::uint64_t failed = 0;   ///< Queued, but the collector did not take them.
  };

  /// Exports to `traces.endpoint` (which must be set) with `traces.headers`, queueing at most
  /// `traces.max_queue_spans`; starts its thread.
  SpanExporter(const config::Traces& traces, const MakeOutbound& make_outbound);
  /// Sends what is queued (within a short grace), then stops its thread.
  ~SpanExporter() override;
  SpanExporter(const SpanExporter&) = delete;
  SpanExporter& operator=(const SpanExporter&) = delete;

  /// Queues the spans of `ctx` when it is sampled and an inference. Thread-safe.
  void ended(const exchange::RequestContext& ctx) override;

  Counts counts() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tollgate::telemetry
