#include "telemetry/span_exporter.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "core/build_info.hpp"
#include "core/log.hpp"
#include "http/own_loop.hpp"
#include "telemetry/otlp_json.hpp"

namespace tollgate::telemetry {
namespace {

namespace asio = boost::asio;

}  // namespace

struct SpanExporter::State {
  State(const config::Traces& traces, const MakeOutbound& make_outbound)
      : endpoint(*traces.endpoint),
        headers(traces.headers),
        max_spans(static_cast<std::size_t>(traces.max_queue_spans)),
        outbound(make_outbound(ioc)) {}

  /// Takes the oldest queued exchanges, up to kBatchSpans spans (one exchange at least).
  std::vector<ExchangeSpans> take() {
    const std::lock_guard lock(mutex);
    std::vector<ExchangeSpans> batch;
    std::size_t spans = 0;
    while (!queue.empty() && (batch.empty() || spans + queue.front().count() <= kBatchSpans)) {
      spans += queue.front().count();
      batch.push_back(std::move(queue.front()));
      queue.pop_front();
    }
    queued_spans -= spans;
    woken = false;
    return batch;
  }

  /// Sends one batch; false when the collector did not take it.
  asio::awaitable<bool> send(const std::vector<ExchangeSpans>& batch) {
    std::size_t spans = 0;
    for (const ExchangeSpans& e : batch) {
      spans += e.count();
    }
    http::OutboundRequest request;
    request.base = endpoint;
    request.method = "POST";
    request.path = endpoint.path;
    request.headers = headers;
    request.content_type = "application/json";
    request.body = encode(batch, build::version());
    request.timeout = kTimeout;
    const auto answer = co_await outbound->send(std::move(request));
    constexpr int kFirstSuccess = 200;
    constexpr int kFirstRedirect = 300;
    const bool ok = answer && answer->status >= kFirstSuccess && answer->status < kFirstRedirect;
    (ok ? sent : failed).fetch_add(spans, std::memory_order_relaxed);
    if (!ok && !failing) {
      // Once per episode: the collector's credentials are never in it, only its host.
      log::line(log::Level::Warn,
                "exporting spans to " + endpoint.host + " failed (" +
                    (answer ? "status " + std::to_string(answer->status) : answer.error().message) +
                    "); spans are dropped until it takes them again");
    }
    failing = !ok;
    co_return ok;
  }

  bool stopRequested() {
    const std::lock_guard lock(mutex);
    return stopping;
  }

  /// Sends batches every kInterval, or sooner when one is full; at shutdown, what is left.
  asio::awaitable<void> run() {
    for (;;) {
      // A stop asked for while a batch was being sent does not wait for the next interval.
      if (!stopRequested()) {
        timer.expires_after(kInterval);
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      }
      const bool stop = stopRequested();
      for (std::vector<ExchangeSpans> batch = take(); !batch.empty(); batch = take()) {
        if (!co_await send(batch) && stop) {
          co_return;
        }
      }
      if (stop) {
        co_return;
      }
    }
  }

  const config::UpstreamUrl endpoint;
  const std::vector<std::pair<std::string, std::string>> headers;
  const std::size_t max_spans;

  std::mutex mutex;
  std::deque<ExchangeSpans> queue;  ///< Guarded by `mutex`, as the three below.
  std::size_t queued_spans = 0;
  bool woken = false;  ///< A full batch has woken the sender.
  bool stopping = false;

  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<std::uint64_t> failed{0};

  // The sender's own: its event loop, timers and client; `failing` is read on its thread only.
  asio::io_context ioc{1};
  asio::steady_timer timer{ioc};
  asio::steady_timer grace{ioc};
  asio::cancellation_signal cancel;
  std::unique_ptr<http::OutboundHttp> outbound;
  bool failing = false;
  std::thread thread;
};

SpanExporter::SpanExporter(const config::Traces& traces, const MakeOutbound& make_outbound)
    : state_(std::make_unique<State>(traces, make_outbound)) {
  http::startOwnLoop(*state_, "tg-spans", "the span exporter");
}

SpanExporter::~SpanExporter() { http::stopOwnLoop(*state_); }

void SpanExporter::ended(const exchange::RequestContext& ctx) {
  if (!ctx.trace.sampled) {
    return;
  }
  const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  std::optional<ExchangeSpans> spans =
      spansOf(ctx, wall.count(), exchange::RequestContext::Clock::now());
  if (!spans) {
    return;
  }
  State& s = *state_;
  const std::size_t count = spans->count();
  bool wake = false;
  {
    const std::lock_guard lock(s.mutex);
    if (s.queued_spans + count > s.max_spans) {
      s.dropped.fetch_add(count, std::memory_order_relaxed);
      return;
    }
    s.queued_spans += count;
    s.queue.push_back(std::move(*spans));
    wake = s.queued_spans >= kBatchSpans && !s.woken;
    s.woken = s.woken || wake;
  }
  if (wake) {
    asio::post(s.ioc, [&s] { s.timer.cancel(); });
  }
}

SpanExporter::Counts SpanExporter::counts() const {
  return {state_->sent.load(std::memory_order_relaxed),
          state_->dropped.load(std::memory_order_relaxed),
          state_->failed.load(std::memory_order_relaxed)};
}

}  // namespace tollgate::telemetry
