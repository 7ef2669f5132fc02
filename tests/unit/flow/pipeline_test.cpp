// The call step every inference handler ends with, against a scripted upstream and a ledger on
// SQLite: a request is refused before anything goes upstream when the gateway or its team
// refuses dryruns or its balance cannot cover its hold; an admitted one is answered with its
// cost at the prices its route was planned with, and charged exactly that; a dryrun is admitted
// on the balance, answered, and charged nothing; a fenced gateway's request (its lease lapsed,
// now or since the key was checked) is refused before anything goes upstream or is charged.
#include "flow/pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>
#include <string>

#include "cache/cache_key.hpp"
#include "cache/codecs.hpp"
#include "fakes.hpp"
#include "openai/chat_request.hpp"
#include "providers/openai/compatible.hpp"
#include "sqlite_ledger.hpp"

namespace tollgate::flow {
namespace {

namespace asio = boost::asio;

config::Config catalogue(bool allow_dryrun) {
  return config::parseConfig(
      std::string("[gateway]\nallow_dryrun = ") + (allow_dryrun ? "true" : "false") + R"(
[models.m]
input_cost_per_token = 0.000001
output_cost_per_token = 0.000002
routing = ["x"]
[models.m.providers.x]
type = "openai"
api_base = "http://127.0.0.1:9/v1"
model = "up"
)",
      "t.toml");
}

const test::Script kAnswer{
    std::nullopt, 200, "application/json",
    R"({"id":"x","created":1,"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},)"
    R"("finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}})"};

constexpr money::Pico kHold = 100'000'000;  // 0.0001 USD
/// 3 prompt tokens at 0.000001 USD and 1 completion token at 0.000002 USD.
constexpr money::Pico kCost = 5'000'000;

class Call : public test::SqliteLedgerTest {
 protected:
  void SetUp() override {
    SqliteLedgerTest::SetUp();
    adapters_.add(config::ProviderType::OpenAI, providers::openAiAdapter());
    transport_.scripts["x"] = kAnswer;
  }

  /// Serves `body` through the call step, on a gateway that takes dryruns or not.
  test::MemoryWriter call(std::string body, bool allow_dryrun = true) {
    const config::Config config = catalogue(allow_dryrun);
    const routing::Breakers breakers(config);
    test::NoOutbound outbound;
    const std::atomic<bool> draining{false};
    const Services s{config,
                     {transport_, adapters_, breakers},
                     outbound,
                     draining,
                     ledger_.get(),
                     writer_.get(),
                     "",
                     cache_,
                     "gw",
                     serving_};
    const http::Request req;
    exchange::RequestContext ctx(config, "req-" + std::to_string(++calls_));
    ctx.caller.team_id = team_;
    ctx.caller.lease_epoch = key_epoch_;
    auto request = openai::decodeChatRequest(body);
    EXPECT_TRUE(request.ok());
    auto plan = planFor(config, request->model, config::Endpoint::Chat);
    EXPECT_TRUE(plan.ok());
    const openai::ResponseMeta meta{request->model, "ep",  "auto",       false,
                                    false,          false, std::nullopt, ""};
    const inference::StartExchange start = inference::chatExchanges(*request, meta);
    cache::ChatAnswerCodec codec(meta, false, true);
    Admission admission{{"chat", "ep", {}, false, body.size()}, kHold, request->dryrun};
    admission.cache = cachePlan(s, ctx, *plan, request->cache, "chat", request->body,
                                cache::kChatIgnored, &codec);
    test::MemoryWriter out;
    asio::io_context ioc;
    asio::co_spawn(ioc, flow::call(s, ctx, req, *plan, std::move(admission), start, false, out),
                   asio::detached);
    ioc.run();
    cache_outcome_ = ctx.cache;
    return out;
  }

  std::int64_t balance() { return balanceAndReserved().first; }
  std::int64_t spendRows() {
    return db_->connection().query("SELECT COUNT(*) FROM spend").at(0).integer(0);
  }

  /// Whether the 503 in `out` says the gateway is fenced, with its Retry-After.
  static bool fencedAnswer(const test::MemoryWriter& out) {
    const bool retry = std::any_of(out.headers.begin(), out.headers.end(), [](const auto& h) {
      return h.first == "Retry-After" && h.second == "1";
    });
    return out.status == 503 && retry && out.body.find("gateway_fenced") != std::string::npos;
  }

  providers::Registry adapters_;
  test::FakeTransport transport_;
  cache::AnswerCache cache_{{1 << 20, 0}, nullptr};
  exchange::CacheOutcome cache_outcome_ = exchange::CacheOutcome::None;  ///< The last call's.
  int calls_ = 0;
  const Lease* serving_ = nullptr;          ///< The gateway's lease; nullptr: never fenced.
  std::optional<std::uint64_t> key_epoch_;  ///< The epoch the caller's key was checked in.
};

constexpr std::string_view kChat = R"({"model":"m","messages":[{"role":"user","content":"x"}]})";
constexpr std::string_view kDryrun =
    R"({"model":"m","tollgate::dryrun":true,"messages":[{"role":"user","content":"x"}]})";

TEST_F(Call, AnAdmittedRequestIsAnsweredWithItsCostAndChargedExactlyThat) {
  db_->topUp(team_, 1'000'000'000'000);
  const test::MemoryWriter out = call(std::string(kChat));
  EXPECT_EQ(out.status, 200) << out.body;
  EXPECT_NE(out.body.find(R"("tollgate::cost":0.000005)"), std::string::npos) << out.body;
  ASSERT_EQ(transport_.sent.size(), 1U);
  ledger_.reset();  // Commits what is queued and gives the escrow back.
  EXPECT_EQ(balance(), 1'000'000'000'000 - kCost);
  EXPECT_EQ(spendRows(), 1);
}

TEST_F(Call, ABalanceThatCannotCoverTheHoldIsRefusedBeforeTheUpstream) {
  db_->topUp(team_, kHold - 1);
  const test::MemoryWriter out = call(std::string(kChat));
  EXPECT_EQ(out.status, 403);
  EXPECT_NE(out.body.find("insufficient_balance"), std::string::npos) << out.body;
  EXPECT_TRUE(transport_.sent.empty());
}

TEST_F(Call, ADryrunIsAdmittedOnTheBalanceAndChargedNothing) {
  db_->topUp(team_, kHold);
  const test::MemoryWriter out = call(std::string(kDryrun));
  EXPECT_EQ(out.status, 200) << out.body;
  EXPECT_EQ(out.body.find("tollgate::cost"), std::string::npos) << out.body;
  ledger_.reset();
  EXPECT_EQ(balance(), kHold);
  EXPECT_EQ(spendRows(), 0);
}

TEST_F(Call, ADryrunTheGatewayRefusesNeverReachesTheUpstream) {
  db_->topUp(team_, kHold);
  const test::MemoryWriter out = call(std::string(kDryrun), false);
  EXPECT_EQ(out.status, 403);
  EXPECT_NE(out.body.find("dryrun_not_allowed"), std::string::npos) << out.body;
  EXPECT_TRUE(transport_.sent.empty());
}

TEST_F(Call, ADryrunAgainstAnEmptyBalanceIsRefusedAsABilledRequestIs) {
  const test::MemoryWriter out = call(std::string(kDryrun));
  EXPECT_EQ(out.status, 403);
  EXPECT_NE(out.body.find("insufficient_balance"), std::string::npos) << out.body;
  EXPECT_TRUE(transport_.sent.empty());
}

TEST_F(Call, WithinItsLeaseAGatewayServesAsEver) {
  db_->topUp(team_, 1'000'000'000'000);
  serving_ = &lease_;
  key_epoch_ = lease_.epoch();
  EXPECT_EQ(call(std::string(kChat)).status, 200);
}

TEST_F(Call, AGatewayPastItsLeaseRefusesBeforeTheUpstreamAndChargesNothing) {
  db_->topUp(team_, 1'000'000'000'000);
  const Lease lapsed(std::chrono::milliseconds(500));  // Never renewed.
  serving_ = &lapsed;
  const test::MemoryWriter out = call(std::string(kChat));
  EXPECT_TRUE(fencedAnswer(out)) << out.status << " " << out.body;
  EXPECT_TRUE(transport_.sent.empty());
  ledger_.reset();
  EXPECT_EQ(spendRows(), 0);
}

TEST_F(Call, ARequestWhoseKeyWasCheckedBeforeAGapIsRefusedAfterIt) {
  db_->topUp(team_, 1'000'000'000'000);
  serving_ = &lease_;
  key_epoch_ = lease_.epoch();
  // The lease lapsed and was renewed since: the key table may have changed meanwhile.
  beat(Lease::Clock::now() + Lease::kDeadAfter);
  const test::MemoryWriter out = call(std::string(kChat));
  EXPECT_TRUE(fencedAnswer(out)) << out.status << " " << out.body;
  EXPECT_TRUE(transport_.sent.empty());
}

TEST_F(Call, TheCacheReadStageRecordsAMissThenAHitThatIsChargedNothing) {
  constexpr std::string_view kCached = R"({"model":"m","tollgate::cache_options":{"enabled":"on"},)"
                                       R"("messages":[{"role":"user","content":"x"}]})";
  db_->topUp(team_, 1'000'000'000'000);
  EXPECT_EQ(call(std::string(kChat)).status, 200);
  EXPECT_EQ(cache_outcome_, exchange::CacheOutcome::None);  // Asked not to use the cache.
  EXPECT_EQ(call(std::string(kCached)).status, 200);
  EXPECT_EQ(cache_outcome_, exchange::CacheOutcome::Miss);
  const test::MemoryWriter hit = call(std::string(kCached));
  EXPECT_EQ(hit.status, 200);
  EXPECT_EQ(cache_outcome_, exchange::CacheOutcome::Hit);
  EXPECT_NE(hit.body.find(R"("tollgate::cache_hit":true)"), std::string::npos) << hit.body;
  EXPECT_NE(hit.body.find(R"("tollgate::cost":0)"), std::string::npos) << hit.body;
  EXPECT_EQ(transport_.sent.size(), 2U);  // The hit never went upstream.
}

}  // namespace
}  // namespace tollgate::flow
