#include "inference/execute.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "core/ids.hpp"
#include "core/text.hpp"
#include "core/trace_context.hpp"
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
  // Shutting down or fenced: nothing else will answer. An invalid request: every provider would
  // refuse it.
  return e.kind != ErrorKind::ServiceUnavailable && e.kind != ErrorKind::GatewayFenced &&
         e.kind != ErrorKind::UpstreamInvalidRequest;
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

asio::awaitable<Attempt> attempt(exchange::RequestContext& ctx, const config::Provider& provider,
                                 const Route& route, const StartExchange& start, bool stream,
                                 const Limits& limits, const Upstreams& up,
                                 exchange::Settlement& settlement, http::ResponseWriter& out) {
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
  // The attempt's own span is the upstream's parent, in the exchange's trace.
  upstream_request.headers.emplace_back("traceparent",
                                        trace::traceparent(ctx.trace, ctx.attempt_log.back().span));
  if (!ctx.trace.tracestate.empty()) {
    upstream_request.headers.emplace_back("tracestate", ctx.trace.tracestate);
  }
  upstream_request.deadline = limits.deadline;
  upstream_request.first_body_deadline = limits.first_body;
  providers::Transport* local = adapter->localTransport();
  providers::Transport& transport = local != nullptr ? *local : up.network;
  auto call = co_await transport.start(provider, std::move(upstream_request));
  if (!call) {
    co_return Attempt{std::move(call).error(), std::nullopt};
  }
  providers::UpstreamCall& c = **call;
  exchange::AttemptRecord& record = ctx.attempt_log.back();
  record.first_byte = ctx.since(Clock::now());
  if (const auto connected = c.connected()) {
    record.connected = ctx.since(connected->at);
    record.reused = connected->reused;
  }
  providers::SecretRedactor redactor(ctx.config);
  redactor.learn(exchange->sentSecrets());
  if (c.status() < 200 || c.status() >= 300) {
    const auto retry_after =
        routing::parseRetryAfter(c.header("Retry-After"), std::chrono::system_clock::now());
    auto detail = co_await c.readAll(kMaxUpstreamErrorBytes);
    std::string text = detail ? std::move(detail).value() : std::string();
    redactor.redact(text);
    co_return Attempt{exchange->error(c.status(), text), retry_after};
  }
  if (stream &&
      !text::isMediaType(c.contentType(), providers::streamContentType(exchange->framing()))) {
    // Not a stream (an HTML error page, a JSON body): fall back before the client has a 200.
    co_return Attempt{Error{ErrorKind::UpstreamError,
                            "upstream provider '" + provider.name +
                                "' answered a streamed request with Content-Type '" +
                                text::printable(c.contentType()) + "'",
                            ""},
                      std::nullopt};
  }
  auto relayed = co_await relayAnswer(ctx, c, *exchange, stream, redactor, settlement, out);
  ctx.response_model = exchange->responseModel();
  // A billed answer's settlement has recorded the counts it charged (validated, clamped); an
  // unbilled one logs what the upstream reported.
  const auto& usage = exchange->usage();
  if (usage && ctx.usage.prompt_tokens == 0 && ctx.usage.completion_tokens == 0) {
    ctx.usage = {usage->prompt_tokens, usage->completion_tokens};
  }
  co_return Attempt{std::move(relayed), std::nullopt};
}

/// The first route's total time limit (zero: none); the deadline of the whole request.
std::chrono::milliseconds totalLimit(const Plan& plan, bool stream) {
  const config::Timeouts& t = plan.routes.front().timeouts;
  return stream ? t.streaming_total : t.non_streaming_total;
}

Error breakerOpen(const config::Provider& provider) {
  return Error{ErrorKind::UpstreamUnavailable,
               "upstream provider '" + provider.name +
                   "' is skipped for now: it failed repeatedly (its circuit breaker is open)",
               ""};
}

/// What the breaker learns from an attempt that reached the client with `status`: a stream that
/// failed after its first byte ended with an error event (502 or 504), so the provider failed
/// though nothing can be tried again. A 503 is ours (billing).
void recordAnswered(routing::CircuitBreaker& breaker, int status) {
  if (status == kStatusBadGateway || status == kStatusGatewayTimeout) {
    breaker.failed(Clock::now());
  } else {
    breaker.succeeded();
  }
}

/// What the breaker learns from an attempt that failed with `e` before reaching the client.
void recordFailed(routing::CircuitBreaker& breaker, const Error& e) {
  if (providerFailed(e)) {
    breaker.failed(Clock::now());
  } else if (e.kind == ErrorKind::UpstreamInvalidRequest) {
    breaker.succeeded();  // It answered: it works.
  } else {
    breaker.abandoned();  // Shutting down, or no adapter: nothing learnt of the provider.
  }
}

/// The failure the client gets when nothing answers, and the Retry-After that came with it.
struct Failure {
  Error error{ErrorKind::UpstreamUnavailable, "no provider could answer", ""};
  std::optional<std::chrono::milliseconds> retry_after;
};

/// What one request shares across its attempts.
struct Run {
  exchange::RequestContext& ctx;
  const Plan& plan;
  const StartExchange& start;
  bool stream;
  Clock::time_point deadline;
  const Upstreams& up;
  exchange::Settlement& settlement;
  http::ResponseWriter& out;
  Failure last;
};

/// After one provider's tries: an answer reached the client, or the next provider may be tried,
/// or nothing more may be (the client left, the deadline passed, the request is at fault).
enum class Next { Answered, Provider, Stop };

/// `provider`'s first attempt and its retries.
asio::awaitable<Next> tryProvider(Run& run, const Route& route, const config::Provider& provider) {
  exchange::RequestContext& ctx = run.ctx;
  const std::shared_ptr<routing::CircuitBreaker> held = run.up.breakers.of(*route.model, provider);
  routing::CircuitBreaker& breaker = *held;
  for (int retry = 0;; ++retry) {
    if (co_await clientLeft()) {
      co_return Next::Stop;
    }
    const auto now = Clock::now();
    if (now >= run.deadline) {
      run.last = Failure{
          Error{ErrorKind::UpstreamTimeout,
                "no provider answered within the model's " +
                    std::to_string(totalLimit(run.plan, run.stream).count()) + " ms time limit",
                ""},
          std::nullopt};
      co_return Next::Stop;
    }
    if (ctx.fenced()) {
      run.last = Failure{fencedError(), std::nullopt};  // Nothing goes upstream.
      co_return Next::Stop;
    }
    if (!breaker.allow(now)) {
      run.last = Failure{breakerOpen(provider), std::nullopt};
      co_return Next::Provider;
    }
    const auto ttft = route.timeouts.streaming_first_token;
    const Limits limits{run.deadline, run.stream && ttft.count() > 0
                                          ? std::min(run.deadline, now + ttft)
                                          : Clock::time_point::max()};
    ctx.provider = provider.name;
    ++ctx.attempts;
    ctx.attempt_started = now;
    exchange::AttemptRecord& began = ctx.attempt_log.emplace_back();
    began.provider = provider.name;
    began.api_base = &provider.api_base;
    began.span = trace::newSpanId();
    began.started = ctx.since(now);
    Attempt a = co_await attempt(ctx, provider, route, run.start, run.stream, limits, run.up,
                                 run.settlement, run.out);
    const auto ended = Clock::now();
    ctx.upstream += std::chrono::duration_cast<std::chrono::microseconds>(ended - now);
    ctx.attempt_started = {};
    exchange::AttemptRecord& record = ctx.attempt_log.back();
    record.ended = ctx.since(ended);
    record.status = a.result ? *a.result : 0;
    record.error_code = a.result ? std::string_view() : errorSpec(a.result.error().kind).code;
    if (a.result) {
      recordAnswered(breaker, *a.result);
      ctx.status = *a.result;
      co_return Next::Answered;
    }
    run.last = Failure{std::move(a.result).error(), a.retry_after};
    const Error& e = run.last.error;
    if (co_await clientLeft()) {
      breaker.abandoned();
      co_return Next::Stop;
    }
    recordFailed(breaker, e);
    if (!worthFallingBack(e)) {
      co_return Next::Stop;
    }
    if (!worthRetrying(e) || retry >= route.retries.num_retries) {
      co_return Next::Provider;
    }
    const auto delay =
        routing::retryDelay(retry, route.retries.max_delay, a.retry_after, ids::fastUnit());
    if (!delay || Clock::now() + *delay >= run.deadline) {
      co_return Next::Provider;  // Asked to wait longer than allowed: another may answer sooner.
    }
    co_await sleepFor(*delay);
  }
}

/// Every route's providers in order, until one answers; false when none did (see run.last).
asio::awaitable<bool> answered(Run& run) {
  for (const Route& route : run.plan.routes) {
    run.ctx.variant = route.variant != nullptr ? route.variant->name : std::string();
    run.ctx.served = route.model;
    for (const config::Provider& provider : route.model->providers) {
      switch (co_await tryProvider(run, route, provider)) {
        case Next::Answered:
          co_return true;
        case Next::Stop:
          co_return false;
        case Next::Provider:
          break;
      }
    }
  }
  co_return false;
}

}  // namespace

asio::awaitable<void> execute(exchange::RequestContext& ctx, const Plan& plan,
                              const StartExchange& start, bool stream, const Upstreams& up,
                              exchange::Settlement& settlement, http::ResponseWriter& out) {
  // From here every exchange is settled, a client's hang-up included: cancellation shows as
  // operations that fail (the relay then settles what the client was sent) rather than as an
  // exception that would skip the settlement, and no provider is tried once it has come.
  co_await asio::this_coro::throw_if_cancelled(false);
  const auto total = totalLimit(plan, stream);
  Run run{ctx,
          plan,
          start,
          stream,
          total.count() > 0 ? Clock::now() + total : Clock::time_point::max(),
          up,
          settlement,
          out,
          Failure{}};
  if (co_await answered(run)) {
    co_return;
  }
  const Failure& last = run.last;
  ctx.error_code = errorSpec(last.error.kind).code;
  co_await settlement.settle(
      exchange::Produced{last.error.status(), std::nullopt, 0, 0, 0, std::nullopt});
  // A rate-limited answer passes on the upstream's Retry-After (whole seconds, rounded up), which
  // the OpenAI SDKs honour before they retry.
  http::Response answer = http::Response::error(last.error);
  if (last.error.kind == ErrorKind::UpstreamRateLimited && last.retry_after) {
    constexpr std::int64_t kMsPerSecond = 1000;
    answer.header("Retry-After",
                  std::to_string((last.retry_after->count() + kMsPerSecond - 1) / kMsPerSecond));
  }
  co_await out.send(std::move(answer));
}

StartExchange chatExchanges(const openai::ChatRequest& request, const openai::ResponseMeta& meta) {
  // A variant's request and meta are made when its route is first tried, and kept for its
  // providers and retries.
  struct Routed {
    const Route* current = nullptr;
    std::optional<openai::ChatRequest> varied;
    openai::ResponseMeta meta;
  };
  auto state = std::make_shared<Routed>(Routed{nullptr, std::nullopt, meta});
  return [&request, &meta, state](const providers::Adapter& adapter,
                                  const config::Provider& provider, const Route& route) {
    Routed& r = *state;
    if (r.current != &route) {
      r.current = &route;
      r.meta = meta;
      r.meta.pricing = route.pricing;
      r.meta.variant_name = route.variant != nullptr ? route.variant->name : std::string();
      r.varied.reset();
      if (route.variant != nullptr) {
        r.varied.emplace(withVariant(request, *route.variant));
      }
    }
    return adapter.chat(r.varied ? *r.varied : request, provider, r.meta);
  };
}

}  // namespace tollgate::inference
