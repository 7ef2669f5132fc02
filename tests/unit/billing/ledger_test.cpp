// The ledger on a SQLite store: concurrent holds never take more than the balance, what a request
// did not cost serves the next ones from the escrow and goes back to the balance when unused, one
// operation the store refuses fails alone, not the batch it was committed with, and holds
// reclaimed while the gateway seemed dead never let the balance go below zero; its listener is
// told each spend row as committed.
#include "billing/ledger.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "sqlite_ledger.hpp"

namespace tollgate::billing {
namespace {

namespace asio = boost::asio;

class LedgerTest : public test::SqliteLedgerTest {
 protected:
  void SetUp() override {
    SqliteLedgerTest::SetUp();
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_thread_.join();
    ledger_.reset();
    db_.reset();
  }

  std::future<Ledger::HoldReply> hold(std::int64_t amount) {
    return asio::co_spawn(io_, ledger_->hold(team_, amount), asio::use_future);
  }
  std::future<bool> settle(const store::Hold& h, const std::string& request_id, std::int64_t cost,
                           bool withholdable = true, store::SpendRow row = {}) {
    row.request_id = request_id;
    row.team_id = team_;
    row.key_public_id = "key";
    row.endpoint = "chat";
    row.model = "m";
    row.cost = cost;
    return asio::co_spawn(io_, ledger_->settle(h, std::move(row), withholdable), asio::use_future);
  }
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::thread io_thread_;
};

TEST_F(LedgerTest, ConcurrentHoldsNeverTakeMoreThanTheBalance) {
  db_->topUp(team_, 10);
  std::vector<std::future<Ledger::HoldReply>> replies;
  for (int i = 0; i < 30; ++i) {
    replies.push_back(hold(1));
  }
  int held = 0;
  int refused = 0;
  for (auto& r : replies) {
    const Ledger::HoldReply reply = r.get();
    held += reply.status == Ledger::HoldStatus::Held ? 1 : 0;
    if (reply.status == Ledger::HoldStatus::Insufficient) {
      ++refused;
      EXPECT_EQ(reply.available, 0);
    }
  }
  EXPECT_EQ(held, 10);
  EXPECT_EQ(refused, 20);
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{10}, std::int64_t{10}));
}

TEST_F(LedgerTest, WhatARequestDidNotCostServesTheNextOneThenGoesBack) {
  db_->topUp(team_, 10'000);
  const Ledger::HoldReply first = hold(10).get();
  ASSERT_EQ(first.status, Ledger::HoldStatus::Held);
  // The store was asked for 10 and eight times that more, the team having plenty left.
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{10'000}, std::int64_t{90}));
  EXPECT_TRUE(settle(first.hold, "req-1", 4).get());
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{9'996}, std::int64_t{86}));
  // The 6 it did not cost and the 80 are at hand: the next request takes them without the store.
  const Ledger::HoldReply second = hold(86).get();
  ASSERT_EQ(second.status, Ledger::HoldStatus::Held);
  EXPECT_EQ(second.hold.id, first.hold.id);
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{9'996}, std::int64_t{86}));
  ledger_->release(second.hold);
  // Unused for a second, the escrow goes back to the balance.
  for (int i = 0; i < 50 && balanceAndReserved().second != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{9'996}, std::int64_t{0}));
}

TEST_F(LedgerTest, NearTheEndOfABalanceNothingIsHeldBeyondWhatRequestsNeed) {
  db_->topUp(team_, 99);
  const Ledger::HoldReply held = hold(1).get();
  ASSERT_EQ(held.status, Ledger::HoldStatus::Held);
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{99}, std::int64_t{1}));
}

TEST_F(LedgerTest, AnOperationTheStoreRefusesFailsAloneNotItsBatch) {
  db_->topUp(team_, 100);
  const Ledger::HoldReply held = hold(3).get();
  ASSERT_EQ(held.status, Ledger::HoldStatus::Held);
  const store::Hold one{held.hold.id, team_, 1};
  // Hold the store's write lock so that the writer waits on its first batch while the next
  // operations queue up behind it: they are then committed together.
  db_->connection().begin();
  auto first = settle(one, "req-0", 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto once = settle(one, "req-1", 1);
  auto twice = settle(one, "req-1", 1);  // The same request id: the spend log refuses it.
  auto other = hold(5);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  db_->connection().commit();

  EXPECT_TRUE(first.get());
  EXPECT_TRUE(once.get());
  EXPECT_FALSE(twice.get());
  EXPECT_EQ(other.get().status, Ledger::HoldStatus::Held);
  // The request whose charge was refused gives its hold back once, as its Charge does.
  ledger_->release(one);
  // Two charges of 1; the refused one's hold is back in the escrow, and with the ledger gone,
  // in the balance; the other hold (5) is still reserved.
  ledger_.reset();
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{98}, std::int64_t{5}));
  // Tried again alone, a settlement of the failed batch wrote its own row whole.
  const store::Rows spend =
      db_->connection().query("SELECT request_id, team_id, cost FROM spend ORDER BY request_id");
  ASSERT_EQ(spend.size(), 2U);
  EXPECT_EQ(spend[0].text(0), "req-0");
  EXPECT_EQ(spend[1].text(0), "req-1");
  EXPECT_EQ(spend[1].text(1), team_);
  EXPECT_EQ(spend[1].integer(2), 1);
}

TEST_F(LedgerTest, SettlementsCommittedTogetherAreAggregatedExactly) {
  db_->topUp(team_, 1'000);
  const Ledger::HoldReply held = hold(100).get();
  ASSERT_EQ(held.status, Ledger::HoldStatus::Held);
  // The store's write lock held: the five settlements queue and are committed in one batch.
  db_->connection().begin();
  std::vector<std::future<bool>> settled;
  for (int i = 0; i < 5; ++i) {
    store::SpendRow row;
    row.prompt_tokens = 10 + i;
    row.completion_tokens = 1;
    row.tags = {{"feature", i % 2 == 0 ? "search" : "chat"}};
    row.tags_json = i % 2 == 0 ? R"({"feature":"search"})" : R"({"feature":"chat"})";
    settled.push_back(
        settle({held.hold.id, team_, 20}, "req-" + std::to_string(i), 3 + i, true, std::move(row)));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  db_->connection().commit();
  for (auto& f : settled) {
    EXPECT_TRUE(f.get());
  }
  ledger_.reset();
  // 3 + 4 + 5 + 6 + 7 = 25 charged; nothing left reserved once the escrow went back.
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{975}, std::int64_t{0}));
  const store::Rows daily = db_->connection().query(
      "SELECT requests, prompt_tokens, completion_tokens, cost FROM spend_daily");
  ASSERT_EQ(daily.size(), 1U);
  EXPECT_EQ(daily[0].integer(0), 5);
  EXPECT_EQ(daily[0].integer(1), 60);
  EXPECT_EQ(daily[0].integer(2), 5);
  EXPECT_EQ(daily[0].integer(3), 25);
  const store::Rows tags =
      db_->connection().query("SELECT value, requests, cost FROM spend_daily_tags ORDER BY value");
  ASSERT_EQ(tags.size(), 2U);
  EXPECT_EQ(tags[0].text(0), "chat");
  EXPECT_EQ(tags[0].integer(1), 2);
  EXPECT_EQ(tags[0].integer(2), 4 + 6);
  EXPECT_EQ(tags[1].integer(1), 3);
  EXPECT_EQ(tags[1].integer(2), 3 + 5 + 7);
}

TEST_F(LedgerTest, HoldsReclaimedFromAStalledGatewayNeverOverdrawTheBalance) {
  const auto resumed = Lease::Clock::now() + Lease::kDeadAfter;
  db_->topUp(team_, 10'000);
  const Ledger::HoldReply first = hold(10).get();
  const Ledger::HoldReply second = hold(10).get();  // From the escrow at hand.
  ASSERT_EQ(first.status, Ledger::HoldStatus::Held);
  ASSERT_EQ(second.hold.id, first.hold.id);
  // This gateway stops heartbeating; another takes it for dead, reclaims its holds, and holds
  // all but 15 of the balance for its own requests.
  {
    store::Transaction tx(db_->connection());
    EXPECT_EQ(db_->reclaimHolds(-Lease::kDeadAfter.count()), 1);
    ASSERT_TRUE(db_->hold({"other", team_, 9'985}, "gw2", 0, 0, false).held);
    tx.commit();
  }
  // It resumes, and its next heartbeat commits ten seconds after the last.
  beat(resumed);
  // A complete answer its balance no longer covers is refused; nothing is written.
  EXPECT_FALSE(settle(first.hold, "req-withheld", 20).get());
  // One that cannot be refused (the client left) is charged what the balance covers.
  EXPECT_TRUE(settle(second.hold, "req-left", 20, false).get());
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{9'985}, std::int64_t{9'985}));
  const store::Rows row =
      db_->connection().query("SELECT cost, uncollected FROM spend WHERE request_id = 'req-left'");
  EXPECT_EQ(row.at(0).integer(0), 15);
  EXPECT_EQ(row.at(0).integer(1), 5);
  EXPECT_TRUE(
      db_->connection().query("SELECT 1 FROM spend WHERE request_id = 'req-withheld'").empty());
  // The escrow it had at hand is gone with its row: the next request is refused, not admitted
  // on money another gateway now holds, and the reclaimed row is never made again.
  const Ledger::HoldReply after = hold(10).get();
  EXPECT_EQ(after.status, Ledger::HoldStatus::Insufficient);
  EXPECT_TRUE(
      db_->connection().query("SELECT 1 FROM holds WHERE id = $1", {first.hold.id}).empty());
}

TEST_F(LedgerTest, AReclaimedEscrowIsReplacedByANewHold) {
  db_->topUp(team_, 10'000);
  const Ledger::HoldReply first = hold(10).get();
  ASSERT_EQ(first.status, Ledger::HoldStatus::Held);
  {
    store::Transaction tx(db_->connection());
    db_->reclaimHolds(-Lease::kDeadAfter.count());
    tx.commit();
  }
  beat(Lease::Clock::now() + Lease::kDeadAfter);
  // The store finds the escrow's row gone: the request is held afresh, on a new row.
  const Ledger::HoldReply next = hold(10).get();
  ASSERT_EQ(next.status, Ledger::HoldStatus::Held);
  EXPECT_NE(next.hold.id, first.hold.id);
  EXPECT_TRUE(settle(next.hold, "req-1", 4).get());
  ledger_.reset();
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{9'996}, std::int64_t{0}));
}

/// What the ledger's commits told it.
struct Told final : CommitListener {
  void spent(const store::SpendRow& row) override {
    std::lock_guard lock(mu);
    rows.push_back(row);
  }
  void batch(std::size_t operations, std::chrono::microseconds) override {
    std::lock_guard lock(mu);
    operations_told += operations;
  }
  std::mutex mu;
  std::vector<store::SpendRow> rows;
  std::size_t operations_told = 0;
};

TEST_F(LedgerTest, ItsListenerIsToldEachSpendRowAsCommitted) {
  Told told;
  ledger_->listen(told);
  db_->topUp(team_, 10'000);
  const Ledger::HoldReply h = hold(10).get();
  ASSERT_EQ(h.status, Ledger::HoldStatus::Held);
  // A row without a hold (a cache hit) debits nothing: its cost is written as uncollected.
  store::SpendRow hit;
  hit.request_id = "req-hit";
  hit.team_id = team_;
  hit.endpoint = "chat";
  hit.model = "m";
  hit.cost = 3;
  ledger_->record(hit);
  EXPECT_TRUE(settle(h.hold, "req-1", 4).get());  // Committed after the row recorded before it.
  ledger_.reset();  // Nothing left to commit: the listener is not told anything after this.
  std::lock_guard lock(told.mu);
  ASSERT_EQ(told.rows.size(), 2U);
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> amounts;
  for (const store::SpendRow& r : told.rows) {
    amounts[r.request_id] = {r.cost, r.uncollected};
  }
  EXPECT_EQ(amounts["req-1"], std::make_pair(std::int64_t{4}, std::int64_t{0}));
  EXPECT_EQ(amounts["req-hit"], std::make_pair(std::int64_t{0}, std::int64_t{3}));
  EXPECT_EQ(told.operations_told, 3U);  // The hold and the two settlements.
}

TEST_F(LedgerTest, HoldsAreInFlightUntilSettledOrReleased) {
  db_->topUp(team_, 10'000);
  const Ledger::HoldReply first = hold(10).get();   // Through the store.
  const Ledger::HoldReply second = hold(20).get();  // From the escrow at hand.
  ASSERT_EQ(second.status, Ledger::HoldStatus::Held);
  EXPECT_EQ(ledger_->inFlight().holds, 2);
  EXPECT_EQ(ledger_->inFlight().amount, 30);
  EXPECT_TRUE(settle(first.hold, "req-1", 4).get());
  EXPECT_EQ(ledger_->inFlight().holds, 1);
  EXPECT_EQ(ledger_->inFlight().amount, 20);
  ledger_->release(second.hold);
  EXPECT_EQ(ledger_->inFlight().holds, 0);
  EXPECT_EQ(ledger_->inFlight().amount, 0);
}

}  // namespace
}  // namespace tollgate::billing
