// The account service as an I/O thread uses it, on a SQLite store: an operation runs on the
// service's thread and the caller resumes on its own; the caller's event loop serves other work
// while the store makes an operation wait and while a change waits for the gateways; refusals
// come back as values and a failing store as an exception in the caller.
#include "accounts/account_service.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <thread>

#include "accounts/outcomes.hpp"
#include "store/migrations.hpp"
#include "temp_dir.hpp"

namespace tollgate::accounts {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using test::refused;

/// Awaits `op` and keeps what it returned in `out`.
template <class T>
asio::awaitable<void> into(asio::awaitable<T> op, std::optional<T>& out) {
  out.emplace(co_await std::move(op));
}

/// Fails the test with what a coroutine threw.
void rethrow(std::exception_ptr e) {
  if (e) {
    std::rethrow_exception(e);
  }
}

/// Waits `delay` on the caller's event loop, then runs `then`.
template <class F>
asio::awaitable<void> after(std::chrono::milliseconds delay, F then) {
  asio::steady_timer timer(co_await asio::this_coro::executor, delay);
  co_await timer.async_wait(asio::use_awaitable);
  then();
}

class AccountServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    where_ = {store::Engine::Sqlite, dir_.file("t.db")};
    db_ = std::make_unique<store::Store>(store::connect(where_));
    store::migrate(db_->connection());
    db_->createTeam("acme");
  }
  void TearDown() override {
    service_.reset();
    db_.reset();
  }

  void startService(std::chrono::milliseconds wait) {
    service_ = std::make_unique<AccountService>(where_, "a server secret for the unit tests",
                                                PropagationPolicy{wait, 1s, 10ms});
  }

  /// Runs `op` to its end on the test's event loop, on this thread.
  template <class T>
  T await(asio::awaitable<T> op) {
    std::optional<T> out;
    asio::co_spawn(io_, into(std::move(op), out), rethrow);
    io_.run();
    io_.restart();
    return std::move(*out);
  }

  ::tollgate::test::TempDir dir_{"tollgate-account-service-test"};
  store::Location where_;
  std::unique_ptr<store::Store> db_;
  asio::io_context io_;
  std::unique_ptr<AccountService> service_;
};

/// Where an operation ran and where its caller resumed.
struct Threads {
  std::thread::id ran_on;
  std::thread::id resumed_on;
};

asio::awaitable<Threads> whereItRuns(AccountService& service) {
  Threads t;
  t.ran_on = co_await service.run([](Accounts&) { return std::this_thread::get_id(); });
  t.resumed_on = std::this_thread::get_id();
  co_return t;
}

TEST_F(AccountServiceTest, AnOperationRunsOnTheServiceThreadAndTheCallerResumesOnItsOwn) {
  startService(0ms);
  const std::thread::id caller = std::this_thread::get_id();
  const Threads first = await(whereItRuns(*service_));
  EXPECT_NE(first.ran_on, caller);
  EXPECT_EQ(first.resumed_on, caller);
  const Threads second = await(whereItRuns(*service_));
  EXPECT_EQ(second.ran_on, first.ran_on);  // One thread of its own.
  EXPECT_EQ(second.resumed_on, caller);

  EXPECT_EQ(await(service_->createTeam({}, "beta", money::kPicoPerUsd))->balance,
            money::kPicoPerUsd);
  const TeamSummary s = *await(service_->teamSummary({}, "beta"));
  EXPECT_EQ(s.team.name, "beta");
  EXPECT_EQ(s.members, 0);
  EXPECT_TRUE(refused(await(service_->createTeam({}, "beta")), RefusalKind::Conflict,
                      "a team named \"beta\" already exists"));
  EXPECT_TRUE(refused(await(service_->showTeam(Actor{"nobody@x.io"}, "beta")),
                      RefusalKind::Forbidden, "nobody@x.io is not a member of team \"beta\""));
}

TEST_F(AccountServiceTest, TheCallersLoopServesOtherWorkWhileTheStoreMakesAnOperationWait) {
  startService(0ms);
  // Another connection holds SQLite's write lock: the operation's transaction waits for it on
  // the service's thread. Only the caller's own loop lets it go, so the operation can end only
  // if that loop was free meanwhile.
  store::Store blocker(store::connect(where_));
  blocker.connection().begin();
  bool released = false;
  std::optional<Outcome<store::Team>> made;
  bool released_before_made = false;
  asio::co_spawn(io_, into(service_->createTeam({}, "late"), made), [&](std::exception_ptr e) {
    released_before_made = released;
    rethrow(e);
  });
  asio::co_spawn(io_,
                 after(100ms,
                       [&] {
                         blocker.connection().rollback();
                         released = true;
                       }),
                 rethrow);
  io_.run();
  ASSERT_TRUE(made);
  EXPECT_TRUE(*made);
  EXPECT_TRUE(released_before_made);
}

/// After `delay`, lists the teams through `service`; says whether that was done before `change`.
asio::awaitable<void> listTeamsDuring(AccountService& service,
                                      const std::optional<Outcome<Propagation>>& change,
                                      bool& before_change) {
  asio::steady_timer timer(co_await asio::this_coro::executor, 30ms);
  co_await timer.async_wait(asio::use_awaitable);
  // The actor is named: a braced temporary in a co_await expression is freed from a byte-by-byte
  // copy by GCC 12 (see console_call.hpp).
  const Actor op;
  EXPECT_TRUE(co_await service.listTeams(op));
  before_change = !change;
}

TEST_F(AccountServiceTest, AChangeWaitsForTheGatewaysOnTheCallersTimerNotOnAThread) {
  startService(5s);
  db_->registerGateway({"gw-1", "host", 42, 0, 0});  // Alive, and behind every change.
  std::optional<Outcome<Propagation>> suspended;
  bool listed_meanwhile = false;
  const auto start = std::chrono::steady_clock::now();
  asio::co_spawn(io_, into(service_->setTeamActive({}, "acme", false), suspended), rethrow);
  // While the change waits, the service's thread runs another operation...
  asio::co_spawn(io_, listTeamsDuring(*service_, suspended, listed_meanwhile), rethrow);
  // ...and the gateway applies the change, on the caller's loop.
  asio::co_spawn(io_, after(200ms, [&] { db_->heartbeat("gw-1", db_->changeSeq()); }), rethrow);
  io_.run();
  EXPECT_TRUE(listed_meanwhile);
  ASSERT_TRUE(suspended);
  ASSERT_TRUE(*suspended);
  EXPECT_TRUE((*suspended)->lagging.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  EXPECT_EQ(db_->findTeam("acme")->state, "suspended");
}

TEST_F(AccountServiceTest, AChangeWaitsOutASilentGatewaysLeaseAndASecondThenReportsItFenced) {
  startService(30s);
  db_->registerGateway({"gw-1", "host", 42, 0, 0, 300});  // A 300 ms lease; silent from now on.
  const auto start = std::chrono::steady_clock::now();
  const Outcome<CreatedKey> made = await(service_->createKey({}, "acme", "k", std::nullopt));
  ASSERT_TRUE(made);
  // Its lease ran out 300 ms after its last heartbeat (its registration); the change returned a
  // second later, not before, and long before the bound of the wait.
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 1'250ms);
  EXPECT_LT(waited, 10s);
  ASSERT_EQ(made->propagation.lagging.size(), 1u);
  EXPECT_EQ(made->propagation.lagging[0].id, "gw-1");
  EXPECT_GT(made->propagation.seq, 0);
}

asio::awaitable<std::string> failure(AccountService& service) {
  try {
    co_await service.run([](Accounts&) -> int {
      throw store::StoreError(store::StoreError::Kind::Unavailable, "the store went away");
    });
  } catch (const store::StoreError& e) {
    co_return e.what();
  }
  co_return "";
}

TEST_F(AccountServiceTest, AFailingStoreIsThrownInTheCallerAndTheNextOperationConnectsAgain) {
  startService(0ms);
  EXPECT_EQ(await(failure(*service_)), "the store went away");
  EXPECT_TRUE(await(service_->showTeam({}, "acme")));
}

}  // namespace
}  // namespace tollgate::accounts
