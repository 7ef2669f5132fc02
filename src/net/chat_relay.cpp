#include "net/chat_relay.hpp"

#include <boost/asio/this_coro.hpp>
#include <vector>

#include "core/ids.hpp"
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

constexpr std::size_t kMaxUpstreamBodyBytes = 64 * 1024 * 1024;
constexpr std::size_t kMaxUpstreamErrorBytes = 1024 * 1024;

/// The dummy provider's answer, handed out in one piece.
class LocalCall final : public UpstreamCall {
 public:
  explicit LocalCall(providers::LocalReply reply) : reply_(std::move(reply)) {}
  int status() const override { return reply_.status; }
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
asio::awaitable<void> relayStream(UpstreamCall& call, const openai::ChatRequest& req,
                                  const openai::ResponseMeta& meta, ClientStream& client) {
  if (!co_await client.beginEventStream()) {
    co_return;
  }
  const providers::KeepRaw keep{req.include_raw_usage, req.include_raw_response};
  openai::SseParser parser;
  std::vector<openai::SseEvent> events;
  for (;;) {
    auto piece = co_await call.readSome();
    std::optional<Error> failure;
    if (!piece) {
      failure = std::move(piece).error();
      if (failure->kind != ErrorKind::UpstreamTimeout) {
        failure->kind = ErrorKind::UpstreamStreamInterrupted;
      }
    } else if (piece->empty()) {
      failure = Error{ErrorKind::UpstreamStreamInterrupted,
                      "the upstream ended the stream before it was complete", ""};
    } else if (!parser.feed(*piece, events)) {
      failure = Error{ErrorKind::UpstreamError, "an upstream stream event is too large", ""};
    }
    if (failure) {
      // Never a stream that looks complete: an error event and no [DONE].
      if (co_await client.sendEvents(openai::sseData(errorBody(*failure)))) {
        co_await client.endEventStream();
      }
      co_return;
    }
    std::string out;
    bool done = false;
    for (openai::SseEvent& ev : events) {
      auto chunk = providers::parseChunk(ev.data, keep);
      if (!chunk) {
        out += openai::sseData(errorBody(chunk.error()));
        if (co_await client.sendEvents(std::move(out))) {
          co_await client.endEventStream();
        }
        co_return;
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
      co_return;  // The client left; dropping the call closes the upstream connection.
    }
    if (done) {
      co_await client.endEventStream();
      // Drain the upstream's terminating bytes so its connection can be reused.
      for (int i = 0; i < 4; ++i) {
        auto rest = co_await call.readSome();
        if (!rest || rest->empty()) {
          break;
        }
      }
      co_return;
    }
  }
}

}  // namespace

asio::awaitable<bool> ClientStream::sendError(const Error& error) {
  co_return co_await send(error.status(), "application/json", errorBody(error));
}

asio::awaitable<ChatOutcome> relayChat(const config::Config& config, UpstreamClient& upstream,
                                       std::string& body, ClientStream& client) {
  ChatOutcome outcome;
  auto fail = [&](const Error& e) -> asio::awaitable<ChatOutcome> {
    outcome.status = e.status();
    co_await client.sendError(e);
    co_return outcome;
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
      continue;
    }
    UpstreamCall& c = **call;
    if (c.status() < 200 || c.status() >= 300) {
      auto detail = co_await c.readAll(kMaxUpstreamErrorBytes);
      last = providers::translateUpstreamError(c.status(), detail ? *detail : std::string());
      outcome.upstream += since(started);
      if (last.kind == ErrorKind::UpstreamInvalidRequest) {
        break;  // The request itself is wrong; another provider would refuse it too.
      }
      continue;
    }
    if (req->stream) {
      outcome.status = 200;
      co_await relayStream(c, *req, meta, client);
      outcome.upstream += since(started);
      co_return outcome;
    }
    auto text = co_await c.readAll(kMaxUpstreamBodyBytes);
    outcome.upstream += since(started);
    if (!text) {
      last = std::move(text).error();
      continue;
    }
    auto completion =
        providers::parseCompletion(*text, {req->include_raw_usage, req->include_raw_response});
    if (!completion) {
      last = std::move(completion).error();
      continue;
    }
    outcome.status = 200;
    co_await client.send(200, "application/json", openai::encodeCompletion(*completion, meta));
    co_return outcome;
  }
  co_return co_await fail(last);
}

}  // namespace tollgate::net
