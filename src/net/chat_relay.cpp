#include "net/chat_relay.hpp"

#include <boost/asio/this_coro.hpp>
#include <vector>

#include "core/ids.hpp"
#include "core/text.hpp"
#include "openai/chat_request.hpp"
#include "openai/chat_response.hpp"
#include "openai/sse.hpp"
#include "providers/dummy.hpp"
#include "providers/openai_compatible.hpp"
#include "routing/model_resolver.hpp"

namespace tollgate::net {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr int kStatusOk = 200;
constexpr std::size_t kMaxUpstreamBodyBytes = 64 * 1024 * 1024;
constexpr std::size_t kMaxUpstreamErrorBytes = 1024 * 1024;
/// After [DONE], how long the rest of the upstream's answer (its last chunk) may take to arrive
/// before its connection is dropped instead of pooled: the client's next request must not wait.
constexpr std::chrono::milliseconds kDrainBudget{5};

/// The dummy provider's answer, handed out in one piece.
class LocalCall final : public UpstreamCall {
 public:
  explicit LocalCall(providers::LocalReply reply) : reply_(std::move(reply)) {}
  int status() const override { return reply_.status; }
  std::string_view contentType() const override { return reply_.content_type; }
  asio::awaitable<void> finish(std::chrono::milliseconds) override { co_return; }
  asio::awaitable<Result<std::string_view>> readSome() override {
    const bool first = !read_;
    read_ = true;
    co_return first ? std::string_view(reply_.body) : std::string_view{};
  }

 private:
  providers::LocalReply reply_;
  bool read_ = false;
};

asio::awaitable<Result<std::unique_ptr<UpstreamCall>>> startCall(UpstreamClient& upstream,
                                                                 const config::Provider& p,
                                                                 std::string body, bool stream) {
  if (p.type == config::ProviderType::Dummy) {
    co_return std::unique_ptr<UpstreamCall>(
        std::make_unique<LocalCall>(providers::respondLocally(body)));
  }
  co_return co_await upstream.start(p, providers::chatPath(p), std::move(body), stream);
}

std::chrono::microseconds since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t);
}

/// Relays an upstream SSE body as our chunks. Once this starts, the client has the 200.
/// Returns the status the client effectively saw: 200, or the status of the error event that
/// ended the stream.
asio::awaitable<int> relayStream(UpstreamCall& call, const openai::ChatRequest& req,
                                 const openai::ResponseMeta& meta,
                                 const providers::SecretRedactor& redactor, ClientStream& client) {
  if (!co_await client.beginEventStream()) {
    co_return kStatusOk;
  }
  const providers::KeepRaw keep{req.include_raw_usage, req.include_raw_response};
  openai::SseParser parser;
  std::vector<openai::SseEvent> events;
  // Never a stream that looks complete: an error event and no [DONE].
  auto endWithError = [&](std::string out, const Error& e) -> asio::awaitable<int> {
    out += openai::sseData(errorBody(e));
    if (co_await client.sendEvents(std::move(out))) {
      co_await client.endEventStream();
    }
    co_return e.status();
  };
  for (;;) {
    auto piece = co_await call.readSome();
    if (!piece) {
      Error failure = std::move(piece).error();
      if (failure.kind != ErrorKind::UpstreamTimeout &&
          failure.kind != ErrorKind::ServiceUnavailable) {
        failure.kind = ErrorKind::UpstreamStreamInterrupted;
      }
      co_return co_await endWithError({}, failure);
    }
    if (piece->empty()) {
      co_return co_await endWithError(
          {}, Error{ErrorKind::UpstreamStreamInterrupted,
                    "the upstream ended the stream before it was complete", ""});
    }
    if (!parser.feed(*piece, events)) {
      co_return co_await endWithError(
          {}, Error{ErrorKind::UpstreamError, "an upstream stream event is too large", ""});
    }
    std::string out;
    bool done = false;
    for (openai::SseEvent& ev : events) {
      redactor.redact(ev.data);
      auto chunk = providers::parseChunk(ev.data, keep);
      if (!chunk) {
        co_return co_await endWithError(std::move(out), chunk.error());
      }
      if (!chunk->has_value()) {
        done = true;
        break;
      }
      openai::Chunk& c = **chunk;
      if (!req.include_usage) {
        if (c.choices.empty() && c.usage) {
          continue;  // The usage chunk we asked for on our own account.
        }
        c.usage.reset();
      }
      out += openai::sseData(openai::encodeChunk(c, meta));
    }
    events.clear();
    if (done) {
      out += openai::kSseDone;
    }
    if (!out.empty() && !co_await client.sendEvents(std::move(out))) {
      co_return kStatusOk;  // The client left; dropping the call closes the upstream connection.
    }
    if (done) {
      co_await client.endEventStream();
      co_await call.finish(kDrainBudget);
      co_return kStatusOk;
    }
  }
}

}  // namespace

asio::awaitable<bool> ClientStream::sendError(const Error& error) {
  co_return co_await send(error.status(), "application/json", errorBody(error));
}

asio::awaitable<void> relayChat(const config::Config& config, UpstreamClient& upstream,
                                const providers::SecretRedactor& redactor, std::string& body,
                                ClientStream& client, ChatOutcome& outcome) {
  auto fail = [&](const Error& e) -> asio::awaitable<void> {
    outcome.status = e.status();
    co_await client.sendError(e);
  };

  auto req = openai::decodeChatRequest(body);
  if (!req) {
    co_return co_await fail(req.error());
  }
  outcome.model = req->model;
  const auto model = routing::resolveModel(config, req->model);
  if (!model) {
    co_return co_await fail(model.error());
  }
  const openai::ResponseMeta meta{
      req->model, req->episode_id.empty() ? ids::uuidV7() : req->episode_id, req->service_tier,
      req->include_raw_usage, req->include_raw_response};

  Error last{ErrorKind::UpstreamUnavailable, "no provider could answer", ""};
  for (const config::Provider& provider : (*model)->providers) {
    const auto started = Clock::now();
    auto call = co_await startCall(upstream, provider, providers::buildChatBody(*req, provider),
                                   req->stream);
    if (!call) {
      last = std::move(call).error();
      outcome.upstream += since(started);
      if (last.kind == ErrorKind::ServiceUnavailable) {
        break;
      }
      continue;
    }
    UpstreamCall& c = **call;
    if (c.status() < 200 || c.status() >= 300) {
      auto detail = co_await c.readAll(kMaxUpstreamErrorBytes);
      std::string text = detail ? std::move(detail).value() : std::string();
      redactor.redact(text);
      last = providers::translateUpstreamError(c.status(), text);
      outcome.upstream += since(started);
      if (last.kind == ErrorKind::UpstreamInvalidRequest) {
        break;  // The request itself is wrong; another provider would refuse it too.
      }
      continue;
    }
    if (req->stream) {
      if (!text::isMediaType(c.contentType(), "text/event-stream")) {
        // Not a stream (an HTML error page, a JSON body): fail over before the client has a 200.
        last = Error{ErrorKind::UpstreamError,
                     "upstream provider '" + provider.name +
                         "' answered a streamed request with Content-Type '" +
                         text::printable(c.contentType()) + "'",
                     ""};
        outcome.upstream += since(started);
        continue;
      }
      outcome.status = co_await relayStream(c, *req, meta, redactor, client);
      outcome.upstream += since(started);
      co_return;
    }
    auto text = co_await c.readAll(kMaxUpstreamBodyBytes);
    outcome.upstream += since(started);
    if (!text) {
      last = std::move(text).error();
      if (last.kind == ErrorKind::ServiceUnavailable) {
        break;
      }
      continue;
    }
    redactor.redact(*text);
    auto completion =
        providers::parseCompletion(*text, {req->include_raw_usage, req->include_raw_response});
    if (!completion) {
      last = std::move(completion).error();
      continue;
    }
    outcome.status = kStatusOk;
    co_await client.send(kStatusOk, "application/json",
                         openai::encodeCompletion(*completion, meta));
    co_return;
  }
  co_return co_await fail(last);
}

}  // namespace tollgate::net
