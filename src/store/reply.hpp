// Awaiting a reply that another thread gives: the store's writer answers coroutines of every I/O
// thread this way, each resumed on its own event loop.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <functional>
#include <memory>
#include <utility>

namespace tollgate::store {

/// Calls `start(done)` and awaits the value another thread passes to `done` (once); the awaiting
/// coroutine resumes on its own executor, which is kept running until then.
template <typename T, typename Start>
boost::asio::awaitable<T> awaitReply(Start start) {
  namespace asio = boost::asio;
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(T)>(
      [](auto handler, Start start) {
        auto work = asio::prefer(asio::get_associated_executor(handler),
                                 asio::execution::outstanding_work.tracked);
        auto waiter = std::make_shared<decltype(handler)>(std::move(handler));
        start(std::function<void(T)>([work, waiter](T reply) {
          asio::post(work, [waiter, reply = std::move(reply)]() mutable {
            std::move (*waiter)(std::move(reply));
          });
        }));
      },
      asio::use_awaitable, std::move(start));
}

}  // namespace tollgate::store
