// What a console call asks of accounts before its operation: the session, a change's CSRF token
// and the caller's role in the team the path names come back from one visit to the account
// service (its visits counted here), whether the call is let through or refused.
#include "console/console_call.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <optional>

#include "config/config.hpp"
#include "fakes.hpp"
#include "routing/breaker.hpp"
#include "store/migrations.hpp"
#include "temp_dir.hpp"

namespace tollgate::console {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;

class ConsoleCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const store::Location where{store::Engine::Sqlite, dir_.file("t.db")};
    store::migrate(*store::connect(where));
    accounts_ = std::make_unique<accounts::AccountService>(
        where, "a server secret for the unit tests", accounts::PropagationPolicy{0ms, 1s, 10ms});
    team_id_ = await(accounts_->createTeam({}, "acme"))->id;
    ASSERT_TRUE(await(accounts_->addUser("ann@example.com", "Ann")));
    ASSERT_TRUE(await(accounts_->addMember({}, "acme", "ann@example.com", "viewer")));
    const auto link = await(accounts_->run(
        [](accounts::Accounts& a) { return a.sessions().createLoginLink("ann@example.com"); }));
    session_ = await(accounts_->redeemLoginLink(*link, "10.0.0.1"))->id;
    headers_.values["Host"] = "gw.test";
    headers_.values["Origin"] = "http://gw.test";
    headers_.values["Cookie"] = "tollgate_session=" + session_;
    headers_.values["X-CSRF-Token"] = await(accounts_->csrfToken(session_));
  }
  void TearDown() override { accounts_.reset(); }

  /// Runs `op` to its end on the test's event loop, on this thread.
  template <class T>
  T await(asio::awaitable<T> op) {
    std::optional<T> out;
    asio::co_spawn(io_, into(std::move(op), out), [](std::exception_ptr e) {
      if (e) {
        std::rethrow_exception(e);
      }
    });
    io_.run();
    io_.restart();
    return std::move(*out);
  }
  template <class T>
  static asio::awaitable<void> into(asio::awaitable<T> op, std::optional<T>& out) {
    out.emplace(co_await std::move(op));
  }

  /// member() for a call on team `team`, with the visits to accounts it made.
  std::pair<bool, std::uint64_t> asMember(std::string_view team, accounts::Action action,
                                          Intent intent) {
    http::Request req;
    req.headers = &headers_;
    req.params.add("team", team);
    const ConsoleServices s{config_, *accounts_, services_, nullptr};
    exchange::RequestContext ctx(config_, "req-1");
    const std::uint64_t before = accounts_->visits();
    const bool let_through = await(member(s, ctx, req, out_, action, intent)).has_value();
    return {let_through, accounts_->visits() - before};
  }

  ::tollgate::test::TempDir dir_{"tollgate-console-call-test"};
  const config::Config config_ = config::defaultConfig();
  test::FakeTransport transport_;
  providers::Registry adapters_;
  const routing::Breakers breakers_{config_};
  test::NoOutbound outbound_;
  const std::atomic<bool> draining_{false};
  cache::AnswerCache cache_{{1 << 20, 0}, nullptr};
  const flow::Services services_{config_,   {transport_, adapters_, breakers_},
                                 outbound_, draining_,
                                 nullptr,   nullptr,
                                 "",        cache_,
                                 "gw"};
  asio::io_context io_;
  std::unique_ptr<accounts::AccountService> accounts_;
  std::string team_id_;
  std::string session_;
  test::MapHeaders headers_;
  test::MemoryWriter out_;
};

TEST_F(ConsoleCallTest, AReadVisitsAccountsOnceForTheSessionAndTheMembership) {
  EXPECT_EQ(asMember(team_id_, accounts::Action::ViewTeam, Intent::Read),
            std::make_pair(true, std::uint64_t{1}));
}

TEST_F(ConsoleCallTest, AChangeVisitsAccountsOnceForTheSessionItsCsrfTokenAndTheMembership) {
  EXPECT_EQ(asMember(team_id_, accounts::Action::ViewTeam, Intent::Change),
            std::make_pair(true, std::uint64_t{1}));
}

TEST_F(ConsoleCallTest, ARefusalAlsoCostsOneVisit) {
  EXPECT_EQ(asMember("not-a-team", accounts::Action::ViewTeam, Intent::Read),
            std::make_pair(false, std::uint64_t{1}));
  EXPECT_EQ(out_.status, 404);
  EXPECT_EQ(asMember(team_id_, accounts::Action::CreateKey, Intent::Change),
            std::make_pair(false, std::uint64_t{1}));
  EXPECT_EQ(out_.status, 403);  // A viewer may not create keys.
  headers_.values["X-CSRF-Token"] = "wrong";
  EXPECT_EQ(asMember(team_id_, accounts::Action::ViewTeam, Intent::Change),
            std::make_pair(false, std::uint64_t{1}));
  EXPECT_EQ(out_.status, 403);
  headers_.values["Cookie"] = "tollgate_session=" + std::string(session_.size(), 'x');
  EXPECT_EQ(asMember(team_id_, accounts::Action::ViewTeam, Intent::Read).first, false);
  EXPECT_EQ(out_.status, 401);
}

}  // namespace
}  // namespace tollgate::console
