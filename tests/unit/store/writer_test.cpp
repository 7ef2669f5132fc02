// The store's writer on a SQLite store: a journal's batch runs before awaited tasks, and those
// before posted ones; an awaited task the store refuses fails alone, not the tasks committed with
// it; a journal detached has its queue committed and gives everything back; a call goes before
// posted work; under steady writes the write-ahead log stays near its bound; a round begins no
// sooner than its spacing after the previous one.
#include "store/writer.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.hpp"

namespace tollgate::store {
namespace {

namespace asio = boost::asio;

/// A journal that says when it committed and ticked.
class Recorder final : public Journal {
 public:
  Recorder(Writer& writer, std::vector<std::string>& order) : writer_(writer), order_(order) {}
  void queue() {
    {
      std::lock_guard lock(mu_);
      queued_ = true;
    }
    writer_.wake();
  }
  bool commit() override {
    {
      std::lock_guard lock(mu_);
      if (!queued_) {
        return false;
      }
      queued_ = false;
    }
    order_.push_back("journal");
    return true;
  }
  void tick(bool closing) override {
    if (closing) {
      order_.push_back("closed");
    }
  }

 private:
  Writer& writer_;
  std::vector<std::string>& order_;  ///< Writer thread only.
  std::mutex mu_;
  bool queued_ = false;
};

class WriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const Location where{Engine::Sqlite, dir_.file("t.db")};
    connect(where)->script("CREATE TABLE probe (x INTEGER NOT NULL)");
    writer_ = std::make_unique<Writer>(where, Writer::Retention{});
    io_thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    work_.reset();
    io_thread_.join();
  }

  /// Runs `task` through the writer from the event loop; returns once it is queued.
  std::future<bool> run(StoreWork::Task task) {
    std::future<bool> done = asio::co_spawn(io_, writer_->run(std::move(task)), asio::use_future);
    // The loop runs the coroutine up to its wait (the task queued) before what is posted after.
    std::promise<void> queued;
    asio::post(io_, [&queued] { queued.set_value(); });
    queued.get_future().wait();
    return done;
  }

  /// Keeps the writer in a posted task until `release` is set, so that what is queued meanwhile
  /// waits for it; returns once the writer is held.
  void holdWriter(std::promise<void>& release) {
    std::promise<void> holding;
    writer_->post([&release, &holding](Connection&) {
      holding.set_value();
      release.get_future().wait();
    });
    holding.get_future().wait();
  }

  test::TempDir dir_{"tollgate-writer-test"};
  std::unique_ptr<Writer> writer_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  std::thread io_thread_;
};

TEST_F(WriterTest, AJournalsBatchRunsFirstThenAwaitedTasksThenPostedOnes) {
  std::vector<std::string> order;  // Written on the writer's thread only.
  Recorder journal(*writer_, order);
  writer_->attach(journal, [](Connection&) {});
  // Hold the writer in a posted task while each kind of work is queued.
  std::promise<void> queued;
  holdWriter(queued);
  std::promise<void> posted;
  writer_->post([&](Connection&) {
    order.push_back("posted");
    posted.set_value();
  });
  std::future<bool> awaited = run([&](Connection&) { order.push_back("awaited"); });
  journal.queue();
  queued.set_value();
  EXPECT_TRUE(awaited.get());
  posted.get_future().wait();  // A call (detach) would go before posted work still queued.
  writer_->detach(journal);
  EXPECT_EQ(order, (std::vector<std::string>{"journal", "awaited", "posted", "closed"}));
}

// Posted work that never runs out must not hold back a call (attach, detach, the log's
// checkpoint): calls go before posted work still queued.
TEST_F(WriterTest, ACallIsNotHeldBackByPostedWorkThatKeepsComing) {
  std::vector<std::string> order;
  Recorder journal(*writer_, order);
  writer_->attach(journal, [](Connection&) {});
  constexpr int kChain = 200'000;
  std::atomic<int> ran{0};
  std::atomic<bool> stop{false};
  std::function<void(Connection&)> next = [&](Connection&) {
    if (++ran < kChain && !stop) {
      writer_->post(next);
    }
  };
  writer_->post(next);
  while (ran.load() < 1000) {  // The writer is in the midst of the posted work.
    std::this_thread::yield();
  }
  writer_->detach(journal);  // A call: returns once the writer has run it.
  const int when_detached = ran.load();
  stop = true;
  writer_.reset();  // Runs what is still posted (which posts nothing more), then stops.
  EXPECT_LT(when_detached, kChain) << "the call waited for all the posted work";
}

TEST_F(WriterTest, AnAwaitedTaskTheStoreRefusesFailsAlone) {
  std::promise<void> queued;
  holdWriter(queued);
  std::future<bool> good = run([](Connection& c) { c.query("INSERT INTO probe (x) VALUES (1)"); });
  std::future<bool> bad =
      run([](Connection& c) { c.query("INSERT INTO probe (x) VALUES (NULL)"); });
  queued.set_value();
  EXPECT_TRUE(good.get());
  EXPECT_FALSE(bad.get());
  EXPECT_TRUE(run([](Connection& c) {
                if (c.query("SELECT x FROM probe").size() != 1) {
                  throw StoreError(StoreError::Kind::Other, "the good task was rolled back");
                }
              }).get());
}

TEST_F(WriterTest, AttachThrowsWhatOpeningThrew) {
  std::vector<std::string> order;
  Recorder journal(*writer_, order);
  EXPECT_THROW(writer_->attach(journal,
                               [](Connection&) {
                                 throw StoreError(StoreError::Kind::Unavailable, "unreachable");
                               }),
               StoreError);
}

TEST_F(WriterTest, ARoundBeginsNoSoonerThanItsSpacingAfterThePreviousOne) {
  using std::chrono::steady_clock;
  const Location where{Engine::Sqlite, dir_.file("paced.db")};
  connect(where);
  Writer writer(where, Writer::Retention{}, {.round_spacing = std::chrono::milliseconds(300)});
  const auto ranAt = [&writer] {
    std::promise<steady_clock::time_point> ran;
    writer.post([&ran](Connection&) { ran.set_value(steady_clock::now()); });
    return ran.get_future().get();
  };
  const auto first = ranAt();
  // Queued once the first round is over (a round runs what is posted while it runs, so posting at
  // once raced its end), long before the spacing: its round waits for the spacing.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto second = ranAt();
  EXPECT_GE(second - first, std::chrono::milliseconds(200));
}

// The checkpointer alone never lets the log start over while the writer commits every fraction
// of a millisecond (a commit lands during each of its checkpoints), so the log file would grow by
// all that is written.
TEST_F(WriterTest, TheLogStaysNearItsBoundUnderSteadyWrites) {
  const Location where{Engine::Sqlite, dir_.file("log.db")};
  connect(where)->script("CREATE TABLE filler (b BLOB NOT NULL)");
  constexpr std::int64_t kBound = 1 << 20;
  constexpr std::int64_t kRowBytes = 8192;
  Writer writer(where, Writer::Retention{}, {.longest_log_bytes = kBound});
  std::atomic<std::int64_t> written{0};
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    writer.post([&](Connection& c) {
      c.query("INSERT INTO filler (b) VALUES (zeroblob(" + std::to_string(kRowBytes) + "))");
      written += kRowBytes;
    });
    std::this_thread::sleep_for(std::chrono::microseconds(400));
  }
  const auto log = static_cast<std::int64_t>(std::filesystem::file_size(where.target + "-wal"));
  ASSERT_GT(written.load(), 16 * kBound) << "too little was written to tell";
  EXPECT_LT(log, written.load() / 4)
      << "the log grew with what was written: " << log << " bytes of " << written.load();
}

}  // namespace
}  // namespace tollgate::store
