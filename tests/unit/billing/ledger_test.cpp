// The ledger on a SQLite store: concurrent holds never take more than the balance, and one
// operation the store refuses fails alone, not the batch it was committed with.
#include "billing/ledger.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <filesystem>
#include <future>
#include <thread>

#include "store/migrations.hpp"

namespace tollgate::billing {
namespace {

namespace asio = boost::asio;

class LedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tollgate-ledger-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    where_ = {store::Engine::Sqlite, (dir_ / "t.db").string()};
    db_ = std::make_unique<store::Store>(store::connect(where_));
    store::migrate(db_->connection());
    team_ = db_->createTeam("acme").id;
    db_->registerGateway({"gw", "test-host", 0, 0, 0});
    ledger_ = std::make_unique<Ledger>(where_, Ledger::Options{"gw", 0});
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_thread_.join();
    ledger_.reset();
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::future<Ledger::HoldReply> hold(const std::string& id, std::int64_t amount) {
    return asio::co_spawn(io_, ledger_->hold({id, team_, amount}), asio::use_future);
  }
  std::future<bool> settle(const std::string& hold_id, const std::string& request_id,
                           std::int64_t cost) {
    store::SpendRow row;
    row.request_id = request_id;
    row.team_id = team_;
    row.key_public_id = "key";
    row.endpoint = "chat";
    row.model = "m";
    row.cost = cost;
    row.tags_json = "{}";
    return asio::co_spawn(io_, ledger_->settle({hold_id, team_, cost}, std::move(row)),
                          asio::use_future);
  }
  std::pair<std::int64_t, std::int64_t> balanceAndReserved() {
    const store::Rows r =
        db_->connection().query("SELECT balance, reserved FROM teams WHERE id = $1", {team_});
    return {r.at(0).integer(0), r.at(0).integer(1)};
  }

  std::filesystem::path dir_;
  store::Location where_;
  std::unique_ptr<store::Store> db_;
  std::string team_;
  std::unique_ptr<Ledger> ledger_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::thread io_thread_;
};

TEST_F(LedgerTest, ConcurrentHoldsNeverTakeMoreThanTheBalance) {
  db_->topUp(team_, 10);
  std::vector<std::future<Ledger::HoldReply>> replies;
  for (int i = 0; i < 30; ++i) {
    replies.push_back(hold("h" + std::to_string(i), 1));
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

TEST_F(LedgerTest, AnOperationTheStoreRefusesFailsAloneNotItsBatch) {
  db_->topUp(team_, 100);
  // Hold the store's write lock so that the writer waits on its first batch while the next
  // operations queue up behind it: they are then committed together.
  db_->connection().begin();
  auto first = hold("a", 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto once = settle("a", "req-1", 1);
  auto twice = settle("b", "req-1", 1);  // The same request id: the spend log refuses it.
  auto other = hold("c", 5);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  db_->connection().commit();

  EXPECT_EQ(first.get().status, Ledger::HoldStatus::Held);
  EXPECT_TRUE(once.get());
  EXPECT_FALSE(twice.get());
  EXPECT_EQ(other.get().status, Ledger::HoldStatus::Held);
  // One charge of 1; hold c (5) still held; hold a settled; b never existed.
  EXPECT_EQ(balanceAndReserved(), std::make_pair(std::int64_t{99}, std::int64_t{5}));
}

}  // namespace
}  // namespace tollgate::billing
