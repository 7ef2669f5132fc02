// The webhook sender: a thread of its own, with its own event loop and outbound HTTP client, that
// delivers the alerts outbox (docs/alerts.md). Every kPoll it leases, through the store's writer,
// the events that are due (across every gateway of the store, each event is leased to one at a
// time), POSTs each signed, within kTimeout, following no redirect and reading at most
// kMaxResponseBytes of the answer (which is never logged), and records the outcome: delivered on
// a 2xx, else due again after a backoff, or failed for good after a day. An event leased by a
// gateway that stopped is sent by another once the lease runs out: at least once.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "http/outbound.hpp"
#include "store/store_work.hpp"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tollgate::alerts {

class WebhookSender {
 public:
  static constexpr std::chrono::seconds kPoll{1};
  static constexpr std::chrono::seconds kTimeout{10};
  static constexpr std::size_t kMaxResponseBytes = 64 * 1024;
  /// Events leased at once: sent one after the other, all within their lease.
  static constexpr std::int64_t kBatch = 8;

  /// Makes the client events are sent with, on the sender's own event loop.
  using MakeOutbound =
      std::function<std::unique_ptr<http::OutboundHttp>(boost::asio::io_context& ioc)>;

  /// Sends to `alerts.webhook_url` (which must be set), signed with `alerts.webhook_secret`,
  /// what this gateway (`gateway_id`) leases through `store`; starts its thread. `store` must
  /// outlive the sender.
  WebhookSender(const config::Alerts& alerts, store::StoreWork& store, std::string gateway_id,
                const MakeOutbound& make_outbound);
  /// Stops its thread; a send under way is given a short grace, then cancelled (its event is
  /// sent again once its lease runs out).
  ~WebhookSender();
  WebhookSender(const WebhookSender&) = delete;
  WebhookSender& operator=(const WebhookSender&) = delete;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tollgate::alerts
