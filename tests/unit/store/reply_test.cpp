// Replies given by another thread (store::Deliveries): the waiters of one event loop resume in one
// turn of it, in the order given; each waiter resumes on its own loop; what is given is sent when
// the Deliveries ends if send() was not called.
#include "store/reply.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>
#include <utility>
#include <vector>

namespace tollgate::store {
namespace {

namespace asio = boost::asio;

/// Coroutines on `ioc` that each await an int and note it, and the waiters they left.
struct Awaiting {
  explicit Awaiting(asio::io_context& ioc) : ioc(ioc) {}
  void spawn(int count) {
    for (int i = 0; i < count; ++i) {
      asio::co_spawn(
          ioc,
          [this]() -> asio::awaitable<void> {
            const int value = co_await awaitReply<int>(
                [this](Waiter<int> w) { waiters.push_back(std::move(w)); });
            got.push_back(value);
            on_own_loop.push_back(ioc.get_executor().running_in_this_thread());
          },
          asio::detached);
    }
    ioc.poll();  // Each runs until it waits.
  }
  asio::io_context& ioc;
  std::vector<Waiter<int>> waiters;
  std::vector<int> got;
  std::vector<bool> on_own_loop;
};

TEST(Deliveries, TheWaitersOfOneLoopResumeInOneTurnInTheOrderGiven) {
  asio::io_context ioc;
  Awaiting a(ioc);
  a.spawn(3);
  ASSERT_EQ(a.waiters.size(), 3U);
  std::thread writer([&] {
    Deliveries<int> out;
    out.give(std::move(a.waiters[2]), 30);
    out.give(std::move(a.waiters[0]), 10);
    out.give(std::move(a.waiters[1]), 20);
    out.send();
  });
  writer.join();
  EXPECT_EQ(ioc.run_one(), 1U);  // One handler resumed all three.
  EXPECT_EQ(a.got, (std::vector<int>{30, 10, 20}));
  EXPECT_EQ(ioc.poll(), 0U);
}

TEST(Deliveries, EachWaiterResumesOnItsOwnLoop) {
  asio::io_context first;
  asio::io_context second;
  Awaiting a(first);
  Awaiting b(second);
  a.spawn(2);
  b.spawn(1);
  {
    Deliveries<int> out;
    out.give(std::move(b.waiters[0]), 7);
    out.give(std::move(a.waiters[1]), 2);
    out.give(std::move(a.waiters[0]), 1);
  }  // Sent as it ends.
  std::thread other([&] { second.run(); });
  first.run();
  other.join();
  EXPECT_EQ(a.got, (std::vector<int>{2, 1}));
  EXPECT_EQ(b.got, (std::vector<int>{7}));
  EXPECT_EQ(a.on_own_loop, (std::vector<bool>{true, true}));
  EXPECT_EQ(b.on_own_loop, (std::vector<bool>{true}));
}

TEST(Deliveries, AnEmptyWaiterIsSkipped) {
  Deliveries<int> out;
  out.give(Waiter<int>{}, 1);
  out.send();  // Nothing to post, and nothing breaks.
}

}  // namespace
}  // namespace tollgate::store
