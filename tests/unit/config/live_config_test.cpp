#include "config/live_config.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "routing/breaker.hpp"

namespace tollgate::config {
namespace {

Config parsed(const std::string& more) {
  return parseConfig(R"([gateway]
listen = "127.0.0.1:9000"
[models.m]
input_cost_per_token = 0.000001
routing = ["a", "b"]
[models.m.providers.a]
type = "openai"
api_base = "http://127.0.0.1:1/v1"
model = "up"
circuit_breaker = { failures = 1, cooldown_ms = 60000 }
[models.m.providers.b]
type = "dummy"
)" + more,
                     "t.toml");
}

TEST(KeepRestartOnly, ReportsAndKeepsWhatNeedsARestart) {
  const Config running = parsed("");
  Config next = parsed(
      "[storage]\nspend_retention_days = 3\n[console]\nlogin_links = false\n"
      "public_url = \"https://gw.example.com\"\nsession_idle_seconds = 60\n");
  next.gateway.port = 9001;
  next.gateway.auth = AuthMode::Open;
  next.gateway.max_body_bytes = 1;
  next.gateway.idle_timeout = Millis{5};  // Not restart-only: taken.
  next.models[0].prices.base.input = 7;   // Taken.
  const auto changed = keepRestartOnly(next, running);
  EXPECT_EQ(changed, (std::vector<std::string>{
                         "gateway.listen", "gateway.auth", "gateway.max_body_bytes", "storage",
                         "console.public_url", "console.session_idle_seconds"}));
  EXPECT_EQ(next.gateway.port, 9000);
  EXPECT_EQ(next.gateway.auth, running.gateway.auth);
  EXPECT_EQ(next.gateway.max_body_bytes, running.gateway.max_body_bytes);
  EXPECT_EQ(next.storage.spend_retention_days, 0);
  EXPECT_EQ(next.console.public_url, running.console.public_url);
  EXPECT_EQ(next.console.session_idle, running.console.session_idle);
  EXPECT_FALSE(next.console.login_links);  // The console's sign-in rules are reloaded.
  EXPECT_EQ(next.gateway.idle_timeout, Millis{5});
  EXPECT_EQ(next.models[0].prices.base.input, 7);
}

TEST(KeepRestartOnly, TheIdentityProviderIsReloaded) {
  ::setenv("TOLLGATE_TEST_IDP_SECRET", "shh", 1);
  const std::string console = "[console]\npublic_url = \"https://gw.example.com\"\n";
  const Config running = parsed(console);
  Config next = parsed(console +
                       "allow_signup = true\nmax_teams_per_user = 1\n[console.oidc]\n"
                       "issuer = \"https://idp.example.com\"\nclient_id = \"tollgate\"\n"
                       "client_secret = \"env::TOLLGATE_TEST_IDP_SECRET\"\n");
  EXPECT_TRUE(keepRestartOnly(next, running).empty());
  ASSERT_TRUE(next.console.oidc.has_value());
  EXPECT_EQ(next.console.oidc->issuer, "https://idp.example.com");
  EXPECT_TRUE(next.console.allow_signup);
  EXPECT_EQ(next.console.max_teams_per_user, 1);
}

TEST(KeepRestartOnly, NothingWhenOnlyModelsChange) {
  const Config running = parsed("");
  Config next = parsed("[models.n]\nrouting = [\"d\"]\n[models.n.providers.d]\ntype = \"dummy\"\n");
  EXPECT_TRUE(keepRestartOnly(next, running).empty());
  EXPECT_EQ(next.models.size(), 2U);
}

TEST(Breakers, AReloadKeepsTheStateOfProvidersThatStayAndRestartsChangedOnes) {
  const Config first = parsed("");
  routing::Breakers breakers(first);
  const auto now = routing::CircuitBreaker::Clock::now();
  breakers.of(first.models[0], first.models[0].providers[0])->failed(now);
  breakers.of(first.models[0], first.models[0].providers[1])->failed(now);
  Config same = parsed("");
  same.models[0].providers[1].breaker.failures = 3;  // A new policy, the same upstream.
  breakers.adopt(same);
  EXPECT_FALSE(breakers.of(same.models[0], same.models[0].providers[0])->allow(now));
  EXPECT_EQ(
      breakers.of(same.models[0], same.models[0].providers[1])->snapshot(now).consecutive_failures,
      1);
  Config moved = parsed("");
  moved.models[0].providers[0].model = "another-upstream-model";
  breakers.adopt(moved);
  EXPECT_TRUE(breakers.of(moved.models[0], moved.models[0].providers[0])->allow(now));
  // A request still pinned to the first configuration gets a breaker of its own, not the new
  // upstream's history.
  EXPECT_TRUE(breakers.of(first.models[0], first.models[0].providers[0])->allow(now));
}

// Swaps the configuration 10,000 times while 8 threads pin it and read what they pinned, as
// requests do (run under ASan in the suite, and by hand under ThreadSanitizer).
TEST(LiveConfig, SwappedWhileEightThreadsPinAndReadIt) {
  Config base = parsed("");
  base.models[0].prices.base.output = 2 * base.models[0].prices.base.input;
  LiveConfig live(base);
  std::atomic<bool> done{false};
  std::atomic<long> reads{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 8; ++i) {
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_relaxed)) {
        const std::shared_ptr<const Config> pinned = live.pin();
        const Model* m = pinned->findModel("m");
        ASSERT_NE(m, nullptr);
        // Each snapshot is whole: its two prices were written together.
        ASSERT_EQ(m->prices.base.output, m->prices.base.input * 2);
        reads.fetch_add(1, std::memory_order_relaxed);
      }
    });
  }
  while (reads.load() < 8) {
    std::this_thread::yield();  // Every reader is at work before the first swap.
  }
  for (int i = 1; i <= 10'000; ++i) {
    if (i % 100 == 0) {
      std::this_thread::yield();  // Let the readers in between swaps, also on one core.
    }
    Config next = base;
    next.models[0].prices.base.input = i;
    next.models[0].prices.base.output = 2 * i;
    live.swap(std::make_shared<const Config>(std::move(next)));
  }
  done = true;
  for (auto& t : readers) {
    t.join();
  }
  EXPECT_EQ(live.pin()->findModel("m")->prices.base.input, 10'000);
  EXPECT_GT(reads.load(), 0);
}

}  // namespace
}  // namespace tollgate::config
