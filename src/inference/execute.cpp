#include "inference/execute.hpp"

#include <boost/asio/this_coro.hpp>

#include "core/text.hpp"
#include "inference/relay.hpp"

namespace tollgate::inference {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxUpstreamErrorBytes = 1024 * 1024;

/// Whether, after `e`, the next provider may still be tried.
bool worthFallingBack(const Error& e) {
  // Shutting down: nothing else will answer. An invalid request: every provider would refuse it.
  return e.kind != ErrorKind::ServiceUnavailable && e.kind != ErrorKind::UpstreamInvalidRequest;
}

/// Whether the client hung up: its handler is being cancelled.
asio::awaitable<bool> clientLeft() {
  co_return (co_await asio::this_coro::cancellation_state).cancelled() !=
      asio::cancellation_type::none;
}

/// One attempt at `provider`: the status the client saw, or why nothing reached it.
asio::awaitable<Result<int>> attempt(http::RequestContext& ctx, const config::Provider& provider,
                                     const StartExchange& start, bool stream, const Upstreams& up,
                                     Settlement& settlement, http::ResponseWriter& out) {
  const providers::Adapter* adapter = up.adapters.find(provider.type);
  auto exchange = adapter != nullptr ? start(*adapter, provider) : nullptr;
  if (exchange == nullptr) {
    co_return Error{ErrorKind::Internal,
                    "provider '" + provider.name + "' cannot serve this endpoint", ""};
  }
  providers::UpstreamRequest upstream_request = exchange->request();
  upstream_request.headers.emplace_back("X-Request-Id", ctx.request_id);
  providers::Transport* local = adapter->localTransport();
  providers::Transport& transport = local != nullptr ? *local : up.network;
  auto call = co_await transport.start(provider, std::move(upstream_request));
  if (!call) {
    co_return std::move(call).error();
  }
  providers::UpstreamCall& c = **call;
  if (c.status() < 200 || c.status() >= 300) {
    auto detail = co_await c.readAll(kMaxUpstreamErrorBytes);
    std::string text = detail ? std::move(detail).value() : std::string();
    up.redactor.redact(text);
    co_return exchange->error(c.status(), text);
  }
  if (stream && !text::isMediaType(c.contentType(), "text/event-stream")) {
    // Not a stream (an HTML error page, a JSON body): fall back before the client has a 200.
    co_return Error{ErrorKind::UpstreamError,
                    "upstream provider '" + provider.name +
                        "' answered a streamed request with Content-Type '" +
                        text::printable(c.contentType()) + "'",
                    ""};
  }
  auto relayed = co_await relayAnswer(c, *exchange, stream, up.redactor, settlement, out);
  if (const auto& usage = exchange->usage()) {
    ctx.usage = {usage->prompt_tokens, usage->completion_tokens};
  }
  co_return relayed;
}

}  // namespace

asio::awaitable<void> execute(http::RequestContext& ctx, const Plan& plan,
                              const StartExchange& start, bool stream, const Upstreams& up,
                              Settlement& settlement, http::ResponseWriter& out) {
  // From here every exchange is settled, a client's hang-up included: cancellation shows as
  // operations that fail (the relay then settles what the client was sent) rather than as an
  // exception that would skip the settlement, and no provider is tried once it has come.
  co_await asio::this_coro::throw_if_cancelled(false);
  Error last{ErrorKind::UpstreamUnavailable, "no provider could answer", ""};
  for (const config::Provider& provider : plan.providers) {
    if (co_await clientLeft()) {
      break;
    }
    ctx.provider = provider.name;
    ctx.attempt_started = Clock::now();
    auto result = co_await attempt(ctx, provider, start, stream, up, settlement, out);
    ctx.upstream +=
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - ctx.attempt_started);
    ctx.attempt_started = {};
    if (result) {
      ctx.status = *result;
      co_return;
    }
    last = std::move(result).error();
    if (!worthFallingBack(last)) {
      break;
    }
  }
  ctx.status = last.status();
  ctx.error_code = errorSpec(last.kind).code;
  co_await settlement.settle(Produced{ctx.status, std::nullopt, 0, 0, 0});
  co_await out.sendError(last);
}

asio::awaitable<void> executeChat(http::RequestContext& ctx, const Plan& plan,
                                  const openai::ChatRequest& request,
                                  const openai::ResponseMeta& meta, const Upstreams& up,
                                  Settlement& settlement, http::ResponseWriter& out) {
  const StartExchange start = [&](const providers::Adapter& adapter,
                                  const config::Provider& provider) {
    return adapter.chat(request, provider, meta);
  };
  co_await execute(ctx, plan, start, request.stream, up, settlement, out);
}

}  // namespace tollgate::inference
