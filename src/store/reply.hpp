// Awaiting a reply that another thread gives: the store's writer answers coroutines of every I/O
// thread this way, each resumed on its own event loop. The replies of one commit are gathered
// and delivered with one post per event loop, not one per reply: a post from a thread that runs
// no event loop allocates, locks the loop's queue and may wake it, and the loop pays a turn for
// each.
#pragma once

#include <algorithm>
#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <utility>
#include <vector>

#include "store/waiter.hpp"

namespace tollgate::store {

/// Calls `start(waiter)` and awaits the value given to the waiter (once, through Deliveries); the
/// awaiting coroutine resumes on its own executor, which is kept running until then.
template <typename T, typename Start>
boost::asio::awaitable<T> awaitReply(Start start) {
  namespace asio = boost::asio;
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(T)>(
      [](auto handler, Start start) {
        using Handler = decltype(handler);
        struct Resume final : Waiter<T>::Resume {
          explicit Resume(Handler h) : handler(std::move(h)) {}
          void operator()(T value) override { std::move(handler)(std::move(value)); }
          Handler handler;
        };
        auto home = asio::prefer(asio::get_associated_executor(handler),
                                 asio::execution::outstanding_work.tracked);
        start(Waiter<T>(std::move(home), std::make_unique<Resume>(std::move(handler))));
      },
      asio::use_awaitable, std::move(start));
}

/// The replies one thread gives in a round: each waiter resumes on its own event loop, all the
/// waiters of one loop in one post, in the order given. What is given is sent by send() or, at
/// the latest, when the Deliveries ends.
template <typename T>
class Deliveries {
 public:
  Deliveries() = default;
  ~Deliveries() { send(); }
  Deliveries(const Deliveries&) = delete;
  Deliveries& operator=(const Deliveries&) = delete;

  void give(Waiter<T>&& waiter, T value) {
    if (!waiter) {
      return;
    }
    // The waiter keeps nothing once given: its loop is kept running by the post from now on.
    boost::asio::any_io_executor home = std::exchange(waiter.home_, {});
    auto loop =
        std::find_if(loops_.begin(), loops_.end(), [&](const Loop& l) { return l.home == home; });
    if (loop == loops_.end()) {
      loop = loops_.insert(loops_.end(), Loop{std::move(home), {}});
    }
    loop->replies.push_back({std::move(waiter.resume_), std::move(value)});
  }

  /// Posts what was given, one handler per event loop.
  void send() {
    for (Loop& loop : loops_) {
      boost::asio::post(loop.home, [replies = std::move(loop.replies)]() mutable {
        for (auto& [resume, value] : replies) {
          (*resume)(std::move(value));
        }
      });
    }
    loops_.clear();
  }

 private:
  struct Loop {
    boost::asio::any_io_executor home;  ///< Keeps the loop running until its post.
    std::vector<std::pair<std::unique_ptr<typename Waiter<T>::Resume>, T>> replies;
  };
  std::vector<Loop> loops_;
};

}  // namespace tollgate::store
