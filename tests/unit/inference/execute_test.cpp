// The attempt loop through fake transports and an in-memory client: fallback order, when it
// stops, error translation and redaction, streamed relays, and what reaches the upstream.
#include "inference/execute.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <set>

#include "fakes.hpp"
#include "providers/dummy/dummy.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::inference {
namespace {

namespace asio = boost::asio;
using test::failing;
using test::FakeTransport;
using test::MemoryWriter;
using test::Script;

/// Records each settlement, what the client had been sent by then and which model (and variant)
/// the exchange record says served it; answers `commits`.
class RecordingSettlement final : public exchange::Settlement {
 public:
  RecordingSettlement(const MemoryWriter& out, const exchange::RequestContext& ctx)
      : out_(out), ctx_(ctx) {}
  bool commits = true;
  std::vector<exchange::Produced> calls;
  std::string body_when_settled;
  std::vector<std::pair<std::string, std::string>> served;

  asio::awaitable<bool> settle(const exchange::Produced& p) override {
    calls.push_back(p);
    body_when_settled = out_.body;
    served.emplace_back(ctx_.served != nullptr ? ctx_.served->id : "", ctx_.variant);
    co_return commits;
  }

 private:
  const MemoryWriter& out_;
  const exchange::RequestContext& ctx_;
};

constexpr std::string_view kKey = "sk-upstream-secret-0123456789";

config::Config catalogue() {
  return config::parseConfig(
      R"(
[models.m]
routing = ["a", "b", "c"]
[models.m.providers.a]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up"
api_key = "env::KEY"
[models.m.providers.b]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up"
[models.m.providers.c]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up"
[models.echo]
routing = ["local"]
[models.echo.providers.local]
type = "dummy"
[models.r]
routing = ["x", "y"]
retries = { num_retries = 2, max_delay_ms = 5 }
[models.r.providers.x]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up-x"
circuit_breaker = { failures = 3, cooldown_ms = 60000 }
[models.r.providers.y]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up-y"
[models.s]
routing = ["z"]
[models.s.providers.z]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up-z"
[functions.f]
fallback_variants = ["b"]
[functions.f.variants.a]
model = "r"
weight = 1
temperature = 0.25
max_tokens = 7
system_prompt = "Be brief."
[functions.f.variants.b]
model = "s"
)",
      "t.toml", [](const std::string&) { return std::optional<std::string>(std::string(kKey)); });
}

const std::string kCompletion =
    R"({"id":"x","created":1,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
    R"("finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})";

struct Outcome {
  explicit Outcome(const config::Config& c) : ctx(c, "req-42") {}
  MemoryWriter out;
  exchange::RequestContext ctx;
  RecordingSettlement settled{out, ctx};
};

class Execute : public ::testing::Test {
 protected:
  Execute() : config_(catalogue()), breakers_(config_) {
    adapters_.add(config::ProviderType::OpenAI, providers::openAiAdapter());
    adapters_.add(config::ProviderType::Dummy, providers::dummyAdapter());
  }

  /// Runs `body` through execute(); every route is costed at `pricing`.
  std::unique_ptr<Outcome> run(std::string body, bool commits = true,
                               std::optional<money::Pricing> pricing = std::nullopt) {
    auto r = std::make_unique<Outcome>(config_);
    r->settled.commits = commits;
    body_ = std::move(body);
    auto request = openai::decodeChatRequest(body_);
    EXPECT_TRUE(request.ok());
    auto p = plan(config_, request->model);
    for (Route& route : p->routes) {
      route.pricing = pricing;
    }
    const openai::ResponseMeta meta{request->model,         "ep",         "auto", false, false,
                                    request->include_usage, std::nullopt, ""};
    const Upstreams up{transport_, adapters_, breakers_};
    asio::io_context ioc;
    const StartExchange start = chatExchanges(*request, meta);
    asio::co_spawn(ioc, execute(r->ctx, *p, start, request->stream, up, r->settled, r->out),
                   asio::detached);
    ioc.run();
    return r;
  }

  std::vector<std::string> tried() const {
    std::vector<std::string> names;
    for (const auto& [name, req] : transport_.sent) {
      names.push_back(name);
    }
    return names;
  }

  static constexpr const char* kChat =
      R"({"model":"m","messages":[{"role":"user","content":"x"}]})";
  static constexpr const char* kStream =
      R"({"model":"m","stream":true,"messages":[{"role":"user","content":"x"}]})";

  config::Config config_;
  routing::Breakers breakers_;
  providers::Registry adapters_;
  FakeTransport transport_;
  std::string body_;
};

TEST_F(Execute, FallsBackInRoutingOrderUntilOneAnswers) {
  transport_.scripts["a"] = failing(Error{ErrorKind::UpstreamUnavailable, "refused", ""});
  transport_.scripts["b"] = {std::nullopt, 500, "application/json", R"({"error":"boom"})"};
  transport_.scripts["c"] = {std::nullopt, 200, "application/json", kCompletion};
  auto r = run(kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r->out.status, 200);
  EXPECT_NE(r->out.body.find(R"("content":"hi")"), std::string::npos) << r->out.body;
  EXPECT_NE(r->out.body.find(R"("episode_id":"ep")"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->ctx.status, 200);
  EXPECT_EQ(r->ctx.provider, "c");
  EXPECT_EQ(r->ctx.usage.prompt_tokens, 3);
  EXPECT_EQ(r->ctx.usage.completion_tokens, 1);
}

TEST_F(Execute, EachAttemptIsRecordedWithItsOutcomeAndTimes) {
  transport_.scripts["a"] = failing(Error{ErrorKind::UpstreamUnavailable, "refused", ""});
  transport_.scripts["b"] = {std::nullopt, 500, "application/json", R"({"error":"boom"})"};
  transport_.scripts["c"] = {std::nullopt, 200, "application/json", kCompletion};
  transport_.connections = {{"b", false}, {"c", true}};
  auto r = run(kChat);
  const std::vector<exchange::AttemptRecord>& log = r->ctx.attempt_log;
  ASSERT_EQ(log.size(), 3U);
  EXPECT_EQ(log[0].connected.count(), 0);  // Never connected.
  EXPECT_FALSE(log[1].reused);             // A fresh connection,
  EXPECT_TRUE(log[2].reused);              // and one the pool kept,
  for (std::size_t i = 1; i < log.size(); ++i) {
    EXPECT_LE(log[i].started, log[i].connected) << i;     // each taken after the attempt began
    EXPECT_LE(log[i].connected, log[i].first_byte) << i;  // and before its answer.
  }
  EXPECT_EQ(log[0].provider, "a");
  EXPECT_EQ(log[0].status, 0);
  EXPECT_EQ(log[0].error_code, "upstream_unavailable");
  EXPECT_EQ(log[0].first_byte.count(), 0);  // No answer ever began.
  EXPECT_EQ(log[1].provider, "b");
  EXPECT_EQ(log[1].error_code, "upstream_error");
  EXPECT_GE(log[1].first_byte, log[1].started);  // Its 500 began.
  EXPECT_EQ(log[2].provider, "c");
  EXPECT_EQ(log[2].status, 200);
  EXPECT_TRUE(log[2].error_code.empty());
  for (std::size_t i = 0; i < log.size(); ++i) {
    EXPECT_LE(log[i].started, log[i].ended) << i;
    if (i > 0) {
      EXPECT_LE(log[i - 1].ended, log[i].started) << i;
    }
  }
}

TEST_F(Execute, AnInvalidRequestIsNotTriedElsewhere) {
  transport_.scripts["a"] = {std::nullopt, 400, "application/json",
                             R"({"error":{"message":"bad temperature"}})"};
  auto r = run(kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(r->out.status, 400);
  EXPECT_NE(r->out.body.find("upstream_invalid_request"), std::string::npos);
  EXPECT_NE(r->out.body.find("bad temperature"), std::string::npos);
  EXPECT_EQ(r->ctx.error_code, "upstream_invalid_request");
}

TEST_F(Execute, ShutdownStopsTheLoop) {
  transport_.scripts["a"] = failing(Error{ErrorKind::ServiceUnavailable, "shutting down", ""});
  auto r = run(kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(r->out.status, 503);
}

TEST_F(Execute, WhenAllFailTheLastErrorIsAnsweredAndSecretsAreMasked) {
  transport_.scripts["a"] = {std::nullopt, 429, "application/json", R"({"error":"slow down"})"};
  transport_.scripts["b"] = {std::nullopt, 401, "application/json", "bad key"};
  transport_.scripts["c"] = {std::nullopt, 502, "text/plain",
                             "proxy says: key " + std::string(kKey) + " failed"};
  auto r = run(kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r->out.status, 502);
  EXPECT_EQ(r->out.body.find(kKey), std::string::npos) << r->out.body;
  EXPECT_NE(r->out.body.find("[redacted]"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->ctx.error_code, "upstream_error");  // The status is the session's to record.
  EXPECT_EQ(r->ctx.provider, "c");
}

TEST_F(Execute, UpstreamErrorsAreTranslated) {
  transport_.scripts["a"] = {std::nullopt, 401, "application/json", R"({"error":"no"})"};
  transport_.scripts["b"] = {std::nullopt, 403, "application/json", R"({"error":"no"})"};
  transport_.scripts["c"] = {std::nullopt, 429, "application/json", R"({"error":"slow"})"};
  auto r = run(kChat);
  EXPECT_EQ(r->out.status, 429);
  EXPECT_NE(r->out.body.find("upstream_rate_limited"), std::string::npos);
}

TEST_F(Execute, AStreamAnsweredAsJsonFallsBackBeforeTheClientHasA200) {
  transport_.scripts["a"] = {std::nullopt, 200, "application/json", kCompletion};
  transport_.scripts["b"] = {
      std::nullopt, 200, "text/event-stream",
      "data: "
      "{\"id\":\"s\",\"created\":1,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"yo\"}}]}"
      "\n\ndata: {\"id\":\"s\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
      "\"completion_tokens\":2,\"total_tokens\":7}}\n\ndata: [DONE]\n\n"};
  auto r = run(kStream);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r->out.streamed);
  EXPECT_TRUE(r->out.ended);
  EXPECT_NE(r->out.body.find(R"("content":"yo")"), std::string::npos) << r->out.body;
  // Usage was not asked for: billed (in the context) but not sent.
  EXPECT_EQ(r->out.body.find("usage"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->ctx.usage.prompt_tokens, 5);
  EXPECT_TRUE(r->out.body.ends_with("data: [DONE]\n\n"));
}

TEST_F(Execute, AStreamThatStopsEarlyEndsWithAnErrorEventAndNoDone) {
  transport_.scripts["a"] = {
      std::nullopt, 200, "text/event-stream",
      "data: {\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"yo\"}}]}\n\n"};
  auto r = run(kStream);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));  // The client already has the 200.
  EXPECT_EQ(r->out.status, 200);
  EXPECT_NE(r->out.body.find("upstream_stream_interrupted"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->out.body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(r->ctx.status, 502);
}

TEST_F(Execute, TheUpstreamGetsTheRequestIdCredentialsAndItsModel) {
  transport_.scripts["a"] = {std::nullopt, 200, "application/json", kCompletion};
  run(kChat);
  ASSERT_EQ(transport_.sent.size(), 1U);
  const providers::UpstreamRequest& req = transport_.sent[0].second;
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(req.path, "/v1/chat/completions");
  const auto header = [&](std::string_view name) {
    for (const auto& [n, v] : req.headers) {
      if (n == name) {
        return v;
      }
    }
    return std::string();
  };
  EXPECT_EQ(header("X-Request-Id"), "req-42");
  EXPECT_EQ(header("Authorization"), "Bearer " + std::string(kKey));
  EXPECT_EQ(header("Accept"), "application/json");
  EXPECT_NE(req.body.find(R"("model":"up")"), std::string::npos) << req.body;
}

TEST_F(Execute, EachAttemptIsSentASpanOfItsOwnInTheExchangesTrace) {
  transport_.scripts["a"] = failing(Error{ErrorKind::UpstreamUnavailable, "refused", ""});
  transport_.scripts["b"] = {std::nullopt, 500, "application/json", R"({"error":"boom"})"};
  transport_.scripts["c"] = {std::nullopt, 200, "application/json", kCompletion};
  auto r = run(kChat);
  ASSERT_EQ(transport_.sent.size(), 3U);
  ASSERT_EQ(r->ctx.attempt_log.size(), 3U);
  std::set<trace::SpanId> spans;
  for (std::size_t i = 0; i < transport_.sent.size(); ++i) {
    const auto& headers = transport_.sent[i].second.headers;
    const auto sent = std::find_if(headers.begin(), headers.end(),
                                   [](const auto& h) { return h.first == "traceparent"; });
    ASSERT_NE(sent, headers.end()) << i;
    EXPECT_EQ(sent->second, trace::traceparent(r->ctx.trace, r->ctx.attempt_log[i].span)) << i;
    EXPECT_NE(r->ctx.attempt_log[i].span, r->ctx.trace.span_id) << i;
    spans.insert(r->ctx.attempt_log[i].span);
    EXPECT_EQ(std::count_if(headers.begin(), headers.end(),
                            [](const auto& h) { return h.first == "tracestate"; }),
              0);  // The caller sent none.
  }
  EXPECT_EQ(spans.size(), 3U);
}

/// An adapter for a wire of its own: its requests name the provider, its answers pass through
/// unchanged, and it reads every upstream failure as the client's mistake.
class FakeAdapter final : public providers::Adapter {
 public:
  class Exchange final : public providers::Exchange {
   public:
    explicit Exchange(const config::Provider& p) : provider_(p) {}
    Result<providers::UpstreamRequest> request() override {
      providers::UpstreamRequest r;
      r.method = "PUT";
      r.path = "/fake/" + provider_.name;
      r.content_type = "text/plain";
      r.body = "hello";
      return r;
    }
    Result<std::string> completion(std::string& body) override { return body; }
    Result<bool> event(std::string_view, std::string& data, std::string& out) override {
      out += data;
      return true;
    }
    Error error(int status, const std::string&) override {
      return Error{ErrorKind::UpstreamInvalidRequest, "fake " + std::to_string(status), ""};
    }

   private:
    const config::Provider& provider_;
  };

  std::unique_ptr<providers::Exchange> chat(const openai::ChatRequest&, const config::Provider& p,
                                            const openai::ResponseMeta&) const override {
    return std::make_unique<Exchange>(p);
  }
};

TEST_F(Execute, TheAdapterDecidesTheWireAndTheTranslation) {
  const FakeAdapter fake;
  adapters_ = providers::Registry();
  adapters_.add(config::ProviderType::OpenAI, fake);
  transport_.scripts["a"] = {std::nullopt, 500, "text/plain", "broken"};
  transport_.scripts["b"] = {std::nullopt, 200, "text/plain", "fine"};
  auto r = run(kChat);
  // The fake calls a 500 the client's mistake, so the loop does not fall back.
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(r->out.status, 400);
  EXPECT_NE(r->out.body.find("fake 500"), std::string::npos) << r->out.body;
  const providers::UpstreamRequest& sent = transport_.sent[0].second;
  EXPECT_EQ(sent.method, "PUT");
  EXPECT_EQ(sent.path, "/fake/a");
  EXPECT_EQ(sent.body, "hello");
}

TEST_F(Execute, AProviderTypeWithoutAnAdapterIsAnInternalError) {
  adapters_ = providers::Registry();
  auto r = run(kChat);
  EXPECT_TRUE(transport_.sent.empty());
  EXPECT_EQ(r->out.status, 500);
}

TEST_F(Execute, TheDummyAnswersInProcess) {
  auto r = run(R"({"model":"echo","max_tokens":2,"messages":[{"role":"user","content":"a b c"}]})");
  EXPECT_TRUE(transport_.sent.empty());
  EXPECT_EQ(r->out.status, 200);
  EXPECT_NE(r->out.body.find(R"("content":"a b")"), std::string::npos) << r->out.body;
  EXPECT_NE(r->out.body.find(R"("finish_reason":"length")"), std::string::npos) << r->out.body;
  EXPECT_NE(r->out.body.find(R"("model":"echo")"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->ctx.usage.prompt_tokens, 3);
  EXPECT_EQ(r->ctx.usage.completion_tokens, 2);
}

TEST_F(Execute, TheDummyStreamsWordsAndUsageOnlyWhenAsked) {
  const std::string body =
      R"({"model":"echo","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi you"}]}])";
  auto plain = run(body + "}");
  EXPECT_TRUE(plain->out.streamed);
  EXPECT_EQ(plain->out.body.find("usage"), std::string::npos) << plain->out.body;
  EXPECT_EQ(plain->ctx.usage.completion_tokens, 2);
  auto with_usage = run(body + R"(,"stream_options":{"include_usage":true}})");
  const std::string& sse = with_usage->out.body;
  EXPECT_NE(sse.find(R"("content":"hi")"), std::string::npos) << sse;
  EXPECT_NE(sse.find(R"("content":" you")"), std::string::npos) << sse;
  EXPECT_NE(sse.find(R"("completion_tokens":2)"), std::string::npos) << sse;
  EXPECT_TRUE(sse.ends_with("data: [DONE]\n\n")) << sse;
}

TEST_F(Execute, AWholeAnswerIsSettledOnceWithItsUsageBeforeItIsSent) {
  transport_.scripts["a"] = {std::nullopt, 200, "application/json", kCompletion};
  auto r = run(kChat);
  ASSERT_EQ(r->settled.calls.size(), 1U);
  EXPECT_EQ(r->settled.body_when_settled, "");
  const exchange::Produced& p = r->settled.calls[0];
  EXPECT_EQ(p.status, 200);
  ASSERT_TRUE(p.usage.has_value());
  EXPECT_EQ(p.usage->prompt_tokens, 3);
  EXPECT_EQ(p.usage->completion_tokens, 1);
  EXPECT_EQ(p.answer_bytes, r->out.body.size());
  EXPECT_EQ(r->out.status, 200);
}

TEST_F(Execute, AnAnswerWhoseChargeCannotBeCommittedIsWithheld) {
  transport_.scripts["a"] = {std::nullopt, 200, "application/json", kCompletion};
  auto r = run(kChat, false);
  EXPECT_EQ(r->out.status, 503);
  EXPECT_NE(r->out.body.find("billing_unavailable"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->out.body.find("\"hi\""), std::string::npos) << r->out.body;
}

TEST_F(Execute, AStreamIsSettledBeforeItsDoneAndWithheldIfTheChargeFails) {
  const std::string events =
      "data: {\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"yo\"}}]}\n\n"
      "data: {\"id\":\"s\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,"
      "\"completion_tokens\":1,\"total_tokens\":6}}\n\ndata: [DONE]\n\n";
  transport_.scripts["a"] = {std::nullopt, 200, "text/event-stream", events};
  auto r = run(kStream);
  ASSERT_EQ(r->settled.calls.size(), 1U);
  EXPECT_EQ(r->settled.body_when_settled.find("[DONE]"), std::string::npos);
  EXPECT_EQ(r->settled.calls[0].status, 200);
  EXPECT_EQ(r->settled.calls[0].usage->completion_tokens, 1);
  EXPECT_TRUE(r->out.body.ends_with("data: [DONE]\n\n"));

  auto refused = run(kStream, false);
  EXPECT_EQ(refused->out.body.find("[DONE]"), std::string::npos) << refused->out.body;
  EXPECT_NE(refused->out.body.find("billing_unavailable"), std::string::npos);
  EXPECT_EQ(refused->ctx.status, 503);
}

TEST_F(Execute, AStreamCutWithoutUsageIsSettledWithTheChunksRelayed) {
  transport_.scripts["a"] = {
      std::nullopt, 200, "text/event-stream",
      "data: {\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"
      "data: {\"id\":\"s\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}}]}\n\n"};
  auto r = run(kStream);
  ASSERT_EQ(r->settled.calls.size(), 1U);
  EXPECT_EQ(r->settled.calls[0].status, 502);
  EXPECT_FALSE(r->settled.calls[0].usage.has_value());
  EXPECT_EQ(r->settled.calls[0].chunks, 2);
}

TEST_F(Execute, AFailureBeforeAnyOutputIsSettledWithItsStatusAndNothingProduced) {
  transport_.scripts["a"] = failing(Error{ErrorKind::UpstreamUnavailable, "refused", ""});
  transport_.scripts["b"] = failing(Error{ErrorKind::UpstreamUnavailable, "refused", ""});
  transport_.scripts["c"] = {std::nullopt, 500, "application/json", R"({"error":"boom"})"};
  auto r = run(kChat);
  ASSERT_EQ(r->settled.calls.size(), 1U);
  EXPECT_EQ(r->settled.calls[0].status, 502);
  EXPECT_FALSE(r->settled.calls[0].usage.has_value());
  EXPECT_EQ(r->settled.calls[0].chunks, 0);
  EXPECT_EQ(r->settled.calls[0].answer_bytes, 0U);
}

const Script kServerError{std::nullopt, 500, "application/json", R"({"error":"boom"})"};
const Script kAnswer{std::nullopt, 200, "application/json", kCompletion};

TEST_F(Execute, RetriesAFailureAnotherTryCanFixThenAnswers) {
  transport_.queued["x"] = {kServerError, failing(Error{ErrorKind::UpstreamTimeout, "slow", ""})};
  transport_.scripts["x"] = kAnswer;
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x", "x", "x"}));
  EXPECT_EQ(r->out.status, 200);
  EXPECT_EQ(r->ctx.attempts, 3);
  EXPECT_EQ(r->ctx.provider, "x");
}

TEST_F(Execute, RetriesAreBoundedThenTheNextProviderAnswers) {
  transport_.scripts["x"] = kServerError;
  transport_.scripts["y"] = kAnswer;
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x", "x", "x", "y"}));
  EXPECT_EQ(r->out.status, 200);
  EXPECT_EQ(r->ctx.provider, "y");
}

TEST_F(Execute, ARetryAfterLongerThanTheMaxDelayFailsOverAtOnce) {
  transport_.scripts["x"] = {std::nullopt, 429, "application/json", R"({"error":"slow down"})"};
  transport_.headers["x"] = {{"retry-after", "30"}};
  transport_.scripts["y"] = kAnswer;
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(r->out.status, 200);
}

TEST_F(Execute, TheClientsOwnMistakeIsNeverRetried) {
  transport_.scripts["x"] = {std::nullopt, 400, "application/json",
                             R"({"error":{"message":"bad"}})"};
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(r->out.status, 400);
}

TEST_F(Execute, AnOpenBreakerSkipsItsProviderUntilTheCooldown) {
  transport_.scripts["x"] = kServerError;
  transport_.scripts["y"] = kAnswer;
  run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  ASSERT_EQ(tried().size(), 4U);  // Three failures open x's breaker.
  transport_.sent.clear();
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"y"}));
  EXPECT_EQ(r->out.status, 200);
  const auto x = breakers_.of(*config_.findModel("r"), config_.findModel("r")->providers[0])
                     ->snapshot(std::chrono::steady_clock::now());
  EXPECT_EQ(x.state, routing::CircuitBreaker::State::Open);
}

TEST_F(Execute, AStreamThatFailsBeforeItsFirstEventFailsOverUnseen) {
  transport_.scripts["x"] = {std::nullopt, 200, "text/event-stream", "data: {\"id\":"};
  transport_.scripts["y"] = {std::nullopt, 200, "text/event-stream",
                             "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{"
                             "\"content\":\"ok\"}}]}\n\ndata: [DONE]\n\n"};
  auto r = run(R"({"model":"r","stream":true,"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x", "x", "x", "y"}));
  EXPECT_TRUE(r->out.streamed);
  EXPECT_NE(r->out.body.find("\"ok\""), std::string::npos) << r->out.body;
  EXPECT_EQ(r->out.body.find("error"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->ctx.status, 200);
}

TEST_F(Execute, AStreamThatFailsAfterItsFirstEventEndsWithAnErrorEvent) {
  transport_.scripts["x"] = {std::nullopt, 200, "text/event-stream",
                             "data: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{"
                             "\"content\":\"half\"}}]}\n\n"};
  auto r = run(R"({"model":"r","stream":true,"messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x"}));
  EXPECT_NE(r->out.body.find("\"half\""), std::string::npos) << r->out.body;
  EXPECT_NE(r->out.body.find("upstream_stream_interrupted"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->out.body.find("[DONE]"), std::string::npos) << r->out.body;
}

TEST_F(Execute, AFunctionSendsItsVariantsDefaultsAndFallsBackToItsFallbackVariant) {
  transport_.scripts["x"] = kServerError;
  transport_.scripts["y"] = kServerError;
  transport_.scripts["z"] = kAnswer;
  auto r = run(R"({"model":"tollgate::function_name::f","temperature":1,)"
               R"("messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"x", "x", "x", "y", "y", "y", "z"}));
  const std::string& first = transport_.sent[0].second.body;
  EXPECT_NE(first.find(R"("messages":[{"role":"system","content":"Be brief."},{"role":"user")"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find(R"("temperature":1)"), std::string::npos) << first;  // The client's wins.
  EXPECT_NE(first.find(R"("max_completion_tokens":7)"), std::string::npos) << first;
  const std::string& last = transport_.sent.back().second.body;
  EXPECT_EQ(last.find("Be brief."), std::string::npos) << last;
  EXPECT_EQ(r->out.status, 200);
  EXPECT_NE(r->out.body.find(R"("variant_name":"b")"), std::string::npos) << r->out.body;
  EXPECT_EQ(r->ctx.variant, "b");
  // The record names the model and variant that answered, for the charge and its row.
  EXPECT_EQ(r->settled.served, (std::vector<std::pair<std::string, std::string>>{{"s", "b"}}));
}

TEST_F(Execute, EachRouteIsCostedAtThePricesItWasPlannedWith) {
  transport_.scripts["x"] = kAnswer;
  // 3 prompt tokens at 2 pico-USD and 1 completion token at 5: 11 pico-USD.
  const money::Prices prices = money::flatPrices(2, 5);
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})", true,
               money::Pricing{&prices, 1'000});
  EXPECT_EQ(r->out.status, 200);
  EXPECT_NE(r->out.body.find(R"("tollgate::cost":0.000000000011)"), std::string::npos)
      << r->out.body;
}

TEST_F(Execute, AFinalRateLimitPassesOnTheUpstreamsRetryAfter) {
  transport_.scripts["x"] = {std::nullopt, 429, "application/json", R"({"error":"slow down"})"};
  transport_.scripts["y"] = {std::nullopt, 429, "application/json", R"({"error":"slow down"})"};
  transport_.headers["y"] = {{"retry-after", "7"}};
  auto r = run(R"({"model":"r","messages":[{"role":"user","content":"x"}]})");
  EXPECT_EQ(r->out.status, 429);
  // Retry-After 7 s is more than max_delay_ms (5): no retry of y, and the client is told.
  EXPECT_EQ(tried(), (std::vector<std::string>{"x", "x", "x", "y"}));
  const auto h = std::find_if(r->out.headers.begin(), r->out.headers.end(),
                              [](const auto& kv) { return kv.first == "Retry-After"; });
  ASSERT_NE(h, r->out.headers.end());
  EXPECT_EQ(h->second, "7");
}

}  // namespace
}  // namespace tollgate::inference
