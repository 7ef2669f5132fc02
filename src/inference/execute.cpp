#include "inference/execute.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <random>

#include "core/text.hpp"
#include "inference/relay.hpp"
#include "inference/variant_request.hpp"
#include "routing/backoff.hpp"

namespace tollgate::inference {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxUpstreamErrorBytes = 1024 * 1024;
constexpr int kStatusBadGateway = 502;
constexpr int kStatusGatewayTimeout = 504;

/// Whether, after `e`, another provider may still be tried.
bool worthFallingBack(const Error& e) {
  // Shutting down: nothing else will answer. An invalid request: every provider would refuse it.
  return e.kind != ErrorKind::ServiceUnavailable && e.kind != ErrorKind::UpstreamInvalidRequest;
}

/// Whether the same provider may answer if asked again: it could not be reached, failed, was
/// too slow or too busy. Never a request it refused as invalid, nor our credentials refused.
bool worthRetrying(const Error& e) {
  switch (e.kind) {
    case ErrorKind::UpstreamUnavailable:
    case ErrorKind::UpstreamTimeout:
    case ErrorKind::UpstreamRateLimited:
    case ErrorKind::UpstreamError:
    case ErrorKind::UpstreamStreamInterrupted:
      return true;
    default:
      return false;
  }
}

/// Whether `e` counts against the provider's circuit breaker.
bool providerFailed(const Error& e) {
  return worthRetrying(e) || e.kind == ErrorKind::UpstreamAuthFailed;
}

/// Whether the client hung up: its handler is being cancelled.
asio::awaitable<bool> clientLeft() {
  co_return (co_await asio::this_coro::cancellation_state).cancelled() !=
      asio::cancellation_type::none;
}

/// A uniform number in [0, 1) for the backoff's jitter.
double jitter() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

asio::awaitable<void> sleepFor(std::chrono::milliseconds delay) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

/// One attempt's outcome: the status the client saw, or why nothing reached it and how long the
/// upstream asked to be left alone (Retry-After).
struct Attempt {
  Result<int> result;
  std::optional<std::chrono::milliseconds> retry_after;
};

/// The limits of one attempt.
struct Limits {
  Clock::time_point deadline;    ///< Of the whole request.
  Clock::time_point first_body;  ///< Of a stream's first event.
};

asio::awaitable<Attempt> attempt(http::RequestContext& ctx, const config::Provider& provider,
                                 const Route& route, const StartExchange& start, bool stream,
                                 const Limits& limits, const Upstreams& up, Settlement& settlement,
                                 http::ResponseWriter& out) {
  const providers::Adapter* adapter = up.adapters.find(provider.type);
  auto exchange = adapter != nullptr ? start(*adapter, provider, route) : nullptr;
  if (exchange == nullptr) {
    co_return Attempt{Error{ErrorKind::Internal,
                            "provider '" + provider.name + "' cannot serve this endpoint", ""},
                      std::nullopt};
  }
  auto built = exchange->request();
  if (!built) {
    co_return Attempt{std::move(built).error(), std::nullopt};
  }
  providers::UpstreamRequest upstream_request = std::move(built).value();
  upstream_request.headers.emplace_back("X-Request-Id", ctx.request_id);
  upstream_request.deadline = limits.deadline;
  upstream_request.first_body_deadline = limits.first_body;
  providers::Transport* local = adapter->localTransport();
  providers::Transport& transport = local != nullptr ? *local : up.network;
  auto call = co_await transport.start(provider, std::move(upstream_request));
  if (!call) {
    co_return Attempt{std::move(call).error(), std::nullopt};
  }
  providers::UpstreamCall& c = **call;
  if (c.status() < 200 || c.status() >= 300) {
    const auto retry_after =
        routing::parseRetryAfter(c.header("Retry-After"), std::chrono::system_clock::now());
    auto detail = co_await c.readAll(kMaxUpstreamErrorBytes);
    std::string text = detail ? std::move(detail).value() : std::string();
    up.redactor.redact(text);
    co_return Attempt{exchange->error(c.status(), text), retry_after};
  }
  if (stream && !text::isMediaType(c.contentType(), "text/event-stream")) {
    // Not a stream (an HTML error page, a JSON body): fall back before the client has a 200.
    co_return Attempt{Error{ErrorKind::UpstreamError,
                            "upstream provider '" + provider.name +
                                "' answered a streamed request with Content-Type '" +
                                text::printable(c.contentType()) + "'",
                            ""},
                      std::nullopt};
  }
  auto relayed = co_await relayAnswer(c, *exchange, stream, up.redactor, settlement, out);
  if (const auto& usage = exchange->usage()) {
    ctx.usage = {usage->prompt_tokens, usage->completion_tokens};
  }
  co_return Attempt{std::move(relayed), std::nullopt};
}

/// When the whole request must be over: the first route's total time limit, from now.
Clock::time_point requestDeadline(const Plan& plan, bool stream) {
  const config::Timeouts& t = plan.routes.front().timeouts;
  const auto total = stream ? t.streaming_total : t.non_streaming_total;
  return total.count() > 0 ? Clock::now() + total : Clock::time_point::max();
}

Error deadlinePassed(const Plan& plan, bool stream) {
  const config::Timeouts& t = plan.routes.front().timeouts;
  const auto total = stream ? t.streaming_total : t.non_streaming_total;
  return Error{
      ErrorKind::UpstreamTimeout,
      "no provider answered within the model's " + std::to_string(total.count()) + " ms time limit",
      ""};
}

Error breakerOpen(const config::Provider& provider) {
  return Error{ErrorKind::UpstreamUnavailable,
               "upstream provider '" + provider.name +
                   "' is skipped for now: it failed repeatedly (its circuit breaker is open)",
               ""};
}

}  // namespace

asio::awaitable<void> execute(http::RequestContext& ctx, const Plan& plan,
                              const StartExchange& start, bool stream, const Upstreams& up,
                              Settlement& settlement, http::ResponseWriter& out) {
  // From here every exchange is settled, a client's hang-up included: cancellation shows as
  // operations that fail (the relay then settles what the client was sent) rather than as an
  // exception that would skip the settlement, and no provider is tried once it has come.
  co_await asio::this_coro::throw_if_cancelled(false);
  const Clock::time_point deadline = requestDeadline(plan, stream);
  Error last{ErrorKind::UpstreamUnavailable, "no provider could answer", ""};
  std::optional<std::chrono::milliseconds> last_retry_after;  // The last failure's Retry-After.
  bool stop = false;
  for (const Route& route : plan.routes) {
    ctx.variant = route.variant != nullptr ? route.variant->name : std::string();
    for (const config::Provider& provider : route.model->providers) {
      routing::CircuitBreaker& breaker = up.breakers.of(provider);
      for (int retry = 0; !stop; ++retry) {
        if (co_await clientLeft()) {
          stop = true;
          break;
        }
        const auto now = Clock::now();
        if (now >= deadline) {
          last = deadlinePassed(plan, stream);
          last_retry_after.reset();
          stop = true;
          break;
        }
        if (!breaker.allow(now)) {
          last = breakerOpen(provider);
          last_retry_after.reset();
          break;
        }
        const auto ttft = route.timeouts.streaming_first_token;
        const Limits limits{deadline, stream && ttft.count() > 0 ? std::min(deadline, now + ttft)
                                                                 : Clock::time_point::max()};
        ctx.provider = provider.name;
        ++ctx.attempts;
        ctx.attempt_started = now;
        Attempt a =
            co_await attempt(ctx, provider, route, start, stream, limits, up, settlement, out);
        ctx.upstream += std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                                              ctx.attempt_started);
        ctx.attempt_started = {};
        if (a.result) {
          // A stream that failed after its first byte ended with an error event (502 or 504):
          // the provider failed, though nothing can be tried again. A 503 is ours (billing).
          if (*a.result == kStatusBadGateway || *a.result == kStatusGatewayTimeout) {
            breaker.failed(Clock::now());
          } else {
            breaker.succeeded();
          }
          ctx.status = *a.result;
          co_return;
        }
        last = std::move(a.result).error();
        last_retry_after = a.retry_after;
        if (co_await clientLeft()) {
          breaker.abandoned();
          stop = true;
          break;
        }
        if (providerFailed(last)) {
          breaker.failed(Clock::now());
        } else if (last.kind == ErrorKind::UpstreamInvalidRequest) {
          breaker.succeeded();  // It answered: it works.
        } else {
          breaker.abandoned();  // Shutting down, or no adapter: nothing learnt of the provider.
        }
        if (!worthFallingBack(last)) {
          stop = true;
          break;
        }
        if (!worthRetrying(last) || retry >= route.retries.num_retries) {
          break;
        }
        const auto delay =
            routing::retryDelay(retry, route.retries.max_delay, a.retry_after, jitter());
        if (!delay || Clock::now() + *delay >= deadline) {
          break;  // Asked to wait longer than allowed: another provider may answer sooner.
        }
        co_await sleepFor(*delay);
      }
      if (stop) {
        break;
      }
    }
    if (stop) {
      break;
    }
  }
  ctx.status = last.status();
  ctx.error_code = errorSpec(last.kind).code;
  co_await settlement.settle(Produced{ctx.status, std::nullopt, 0, 0, 0});
  // A rate-limited answer passes on the upstream's Retry-After (whole seconds, rounded up), which
  // the OpenAI SDKs honour before they retry.
  http::Response answer = http::Response::error(last);
  if (last.kind == ErrorKind::UpstreamRateLimited && last_retry_after) {
    constexpr std::int64_t kMsPerSecond = 1000;
    answer.header("Retry-After",
                  std::to_string((last_retry_after->count() + kMsPerSecond - 1) / kMsPerSecond));
  }
  co_await out.send(std::move(answer));
}

asio::awaitable<void> executeChat(http::RequestContext& ctx, const Plan& plan,
                                  const openai::ChatRequest& request,
                                  const openai::ResponseMeta& meta, const Upstreams& up,
                                  Settlement& settlement, http::ResponseWriter& out) {
  // A variant's request and meta are made when its route is first tried, and kept for its
  // providers and retries.
  const Route* current = nullptr;
  std::optional<openai::ChatRequest> varied;
  openai::ResponseMeta routed = meta;
  const StartExchange start = [&](const providers::Adapter& adapter,
                                  const config::Provider& provider, const Route& route) {
    if (current != &route) {
      current = &route;
      routed = meta;
      routed.pricing = settlement.route(*route.model, ctx.variant);
      routed.variant_name = ctx.variant;
      varied.reset();
      if (route.variant != nullptr) {
        varied.emplace(withVariant(request, *route.variant));
      }
    }
    return adapter.chat(varied ? *varied : request, provider, routed);
  };
  co_await execute(ctx, plan, start, request.stream, up, settlement, out);
}

}  // namespace tollgate::inference
