#include "inference/relay.hpp"

#include <optional>
#include <vector>

#include "core/text.hpp"
#include "openai/sse.hpp"

namespace tollgate::inference {
namespace {

namespace asio = boost::asio;

constexpr int kStatusOk = 200;
constexpr int kStatusClientLeft = 499;
constexpr std::size_t kMaxUpstreamBodyBytes = 64 * 1024 * 1024;
/// After the end of a stream, how long the rest of the upstream's answer (its last chunk) may
/// take to arrive before its connection is dropped instead of pooled: the client's next request
/// must not wait.
constexpr std::chrono::milliseconds kDrainBudget{5};

Error chargeNotRecorded() {
  return Error{ErrorKind::BillingUnavailable,
               "the answer's charge could not be recorded, so the answer is withheld; try again",
               ""};
}

/// Relays an upstream stream (SSE or an event stream, as the exchange frames it) as our events. The
/// client's 200 waits for the first of them (it leaves in the same write): until then a failure or
/// a stall is an error, and another provider may still answer; after it, a failure ends the stream
/// with an error event. The lease is checked before each write: fenced, the events not yet written
/// are dropped.
asio::awaitable<Result<int>> relayStream(const exchange::RequestContext& ctx,
                                         providers::UpstreamCall& call,
                                         providers::Exchange& exchange,
                                         const providers::SecretRedactor& redactor,
                                         exchange::Settlement& settlement,
                                         http::ResponseWriter& out) {
  std::int64_t chunks = 0;        // Relayed to the client: what a stream without usage is charged.
  std::int64_t batch_chunks = 0;  // Of those, the ones in the batch not yet written.
  bool relayed = false;           // Whether content has reached the client.
  const auto produced = [&](int status) {
    exchange::Produced p{status, exchange.usage(), chunks, 0, 0, exchange.interimUsage()};
    p.relayed = relayed;
    return p;
  };
  bool started = false;  // Whether the head has gone to the client.
  providers::StreamDecoder decoder(exchange.framing());
  std::vector<openai::SseEvent> events;
  std::string batch;
  std::optional<Error> failure;
  while (!failure) {
    if (started) {
      batch.clear();
      batch_chunks = 0;
    }
    auto piece = co_await call.readSome();
    if (!piece) {
      failure = std::move(piece).error();
      if (failure->kind != ErrorKind::UpstreamTimeout &&
          failure->kind != ErrorKind::ServiceUnavailable) {
        failure->kind = ErrorKind::UpstreamStreamInterrupted;
      }
      break;
    }
    bool done = false;
    if (piece->empty()) {
      // The body's end: complete only when the wire says so (Gemini's streams end this way).
      const std::size_t before = batch.size();
      auto ended = decoder.pending() ? Result<bool>(false) : exchange.streamEnded(batch);
      if (!ended || !*ended) {
        batch.resize(before);
        failure = !ended ? std::move(ended).error()
                         : Error{ErrorKind::UpstreamStreamInterrupted,
                                 "the upstream ended the stream before it was complete", ""};
        break;
      }
      const std::int64_t added = batch.size() > before ? 1 : 0;
      chunks += added;
      batch_chunks += added;
      done = true;
    } else if (auto fed = decoder.feed(*piece, events); !fed) {
      failure = std::move(fed).error();
      break;
    }
    for (openai::SseEvent& ev : events) {
      redactor.redact(ev.data);
      const std::size_t before = batch.size();
      auto step = exchange.event(ev.event, ev.data, batch);
      const std::int64_t added = batch.size() > before ? 1 : 0;
      chunks += added;
      batch_chunks += added;
      if (!step) {
        failure = std::move(step).error();
        break;
      }
      if (*step) {
        done = true;
        break;
      }
    }
    events.clear();
    if (failure) {
      break;
    }
    if (ctx.fenced()) {
      // Stalled or cut off past its lease: the key may have been revoked, the hold reclaimed.
      chunks -= batch_chunks;
      batch.clear();
      failure = fencedError();
      break;
    }
    if (!started) {
      if (batch.empty() && !done) {
        continue;  // Nothing for the client yet: its 200 waits.
      }
      started = true;
      if (!co_await out.beginStream(http::Response::eventStream())) {
        co_await settlement.settle(produced(kStatusClientLeft));
        co_return kStatusOk;
      }
    }
    if (done) {
      const std::size_t events_end = batch.size();
      batch += openai::kSseDone;
      exchange::Produced complete = produced(kStatusOk);
      complete.tail = batch;  // What the client will have once the charge is committed.
      if (!co_await settlement.settle(complete)) {
        batch.resize(events_end);
        failure = chargeNotRecorded();
        break;
      }
      if (co_await out.endStream(batch)) {
        co_await call.finish(kDrainBudget);
      }
      co_return kStatusOk;
    }
    if (!co_await out.write(batch)) {
      // The client left; dropping the call closes the upstream connection.
      co_await settlement.settle(produced(kStatusClientLeft));
      co_return kStatusOk;
    }
    relayed = relayed || !batch.empty();
  }
  if (!started) {
    co_return std::move(*failure);  // Nothing reached the client: another provider may answer.
  }
  // Never a stream that looks complete: the events decoded so far, an error event, no [DONE].
  co_await settlement.settle(produced(failure->status()));
  batch += openai::sseData(errorBody(*failure));
  co_await out.endStream(batch);
  co_return failure->status();
}

}  // namespace

asio::awaitable<Result<int>> relayAnswer(const exchange::RequestContext& ctx,
                                         providers::UpstreamCall& call,
                                         providers::Exchange& exchange, bool stream,
                                         const providers::SecretRedactor& redactor,
                                         exchange::Settlement& settlement,
                                         http::ResponseWriter& out) {
  if (stream) {
    co_return co_await relayStream(ctx, call, exchange, redactor, settlement, out);
  }
  auto text = co_await call.readAll(kMaxUpstreamBodyBytes);
  if (!text) {
    co_return std::move(text).error();
  }
  redactor.redact(*text);
  auto body = exchange.completion(*text);
  if (!body) {
    co_return std::move(body).error();
  }
  exchange::Produced complete{kStatusOk,          exchange.usage(), 0,     body->size(),
                              exchange.audioMs(), std::nullopt,     *body, exchange.contentType()};
  if (ctx.fenced()) {
    co_return fencedError();  // Nothing reached the client: nothing is charged.
  }
  if (!co_await settlement.settle(complete)) {
    const Error e = chargeNotRecorded();
    co_await out.sendError(e);
    co_return e.status();
  }
  http::Response answer = http::Response::json(kStatusOk, std::move(body).value());
  answer.content_type = exchange.contentType();
  co_await out.send(std::move(answer));
  co_return kStatusOk;
}

}  // namespace tollgate::inference
