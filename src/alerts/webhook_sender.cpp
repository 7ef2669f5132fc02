#include "alerts/webhook_sender.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "alerts/alert_event.hpp"
#include "core/log.hpp"
#include "http/own_loop.hpp"
#include "store/alert_store.hpp"

namespace tollgate::alerts {
namespace {

namespace asio = boost::asio;

/// A lease covers its whole batch sent one by one, each within the timeout, and some margin.
constexpr std::chrono::seconds kLease =
    WebhookSender::kBatch * WebhookSender::kTimeout + std::chrono::seconds(30);

std::int64_t unixSeconds(std::int64_t ms) { return ms / 1000; }

}  // namespace

struct WebhookSender::State {
  State(const config::Alerts& alerts, store::StoreWork& work, std::string gateway,
        const MakeOutbound& make_outbound)
      : url(*alerts.webhook_url),
        secret(alerts.webhook_secret),
        store(work),
        gateway_id(std::move(gateway)),
        outbound(make_outbound(ioc)) {}

  bool stopRequested() {
    const std::lock_guard lock(mutex);
    return stopping;
  }

  /// Leases the events that are due; none when the store failed.
  asio::awaitable<std::vector<store::AlertRow>> lease() {
    std::vector<store::AlertRow> leased;
    const std::int64_t now = store::nowMs();
    const std::int64_t until =
        now + std::chrono::duration_cast<std::chrono::milliseconds>(kLease).count();
    const bool ok = co_await store.run([&](store::Connection& c) {
      leased = store::AlertStore(c).leaseAlerts(gateway_id, now, until, kBatch);
    });
    if (!ok) {
      leased.clear();
    }
    co_return leased;
  }

  /// POSTs `event` once; its receiver's status, or none when it did not answer in time, in
  /// full, or within kMaxResponseBytes.
  asio::awaitable<std::optional<std::int64_t>> post(const store::AlertRow& event) {
    http::OutboundRequest request;
    request.base = url;
    request.method = "POST";
    request.path = url.path.empty() ? "/" : url.path;
    request.content_type = "application/json";
    request.body = eventBody(event);
    request.headers = {
        {"Tollgate-Signature", signature(secret, unixSeconds(store::nowMs()), request.body)},
        {"User-Agent", "tollgate-alerts"}};
    request.timeout = kTimeout;
    request.max_response_bytes = kMaxResponseBytes;
    const auto answer = co_await outbound->send(std::move(request));
    if (!answer) {
      co_return std::nullopt;
    }
    co_return answer->status;
  }

  /// Sends one leased event and records how it went.
  asio::awaitable<void> deliver(const store::AlertRow& event) {
    const std::optional<std::int64_t> status = co_await post(event);
    if (stopRequested()) {
      co_return;  // Perhaps cut short: the lease runs out and the event is sent again.
    }
    constexpr std::int64_t kFirstSuccess = 200;
    constexpr std::int64_t kFirstRedirect = 300;
    const std::int64_t now = store::nowMs();
    store::AlertAttempt attempt;
    attempt.id = event.id;
    attempt.status = status;
    attempt.delivered = status && *status >= kFirstSuccess && *status < kFirstRedirect;
    if (!attempt.delivered) {
      attempt.retry_at = nextAttempt(event.created_at, now, event.attempts + 1);
    }
    const bool recorded = co_await store.run([&](store::Connection& c) {
      store::AlertStore(c).recordAlertAttempt(gateway_id, attempt, now);
    });
    if (!attempt.delivered && !failing) {
      // Once per episode, and only the receiver's host: its URL may carry a token.
      log::line(log::Level::Warn,
                "delivering an alert to " + url.host + " failed (" +
                    (status ? "status " + std::to_string(*status) : std::string("no answer")) +
                    "); it is tried again with a backoff");
    } else if (attempt.delivered && failing) {
      log::line(log::Level::Info, "alerts reach " + url.host + " again");
    }
    failing = !attempt.delivered;
    if (!recorded) {
      log::line(log::Level::Warn,
                "an alert's delivery could not be recorded: it may be sent again");
    }
  }

  asio::awaitable<void> run() {
    while (!stopRequested()) {
      const std::vector<store::AlertRow> leased = co_await lease();
      for (const store::AlertRow& event : leased) {
        if (stopRequested()) {
          co_return;
        }
        co_await deliver(event);
      }
      if (static_cast<std::int64_t>(leased.size()) < kBatch && !stopRequested()) {
        timer.expires_after(kPoll);
        co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      }
    }
  }

  const config::UpstreamUrl url;
  const std::string secret;
  store::StoreWork& store;
  const std::string gateway_id;

  std::mutex mutex;
  bool stopping = false;  ///< Guarded by `mutex`.

  // The sender's own: its event loop, timers and client; `failing` is read on its thread only.
  asio::io_context ioc{1};
  asio::steady_timer timer{ioc};
  asio::steady_timer grace{ioc};
  asio::cancellation_signal cancel;
  std::unique_ptr<http::OutboundHttp> outbound;
  bool failing = false;
  std::thread thread;
};

WebhookSender::WebhookSender(const config::Alerts& alerts, store::StoreWork& store,
                             std::string gateway_id, const MakeOutbound& make_outbound)
    : state_(std::make_unique<State>(alerts, store, std::move(gateway_id), make_outbound)) {
  http::startOwnLoop(*state_, "tg-alerts", "the alerts' webhook sender");
}

WebhookSender::~WebhookSender() { http::stopOwnLoop(*state_); }

}  // namespace tollgate::alerts
