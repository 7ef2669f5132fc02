// A worker that sends on a thread and event loop of its own (the span exporter, the alerts'
// webhook sender): its run() started there, and its stop: no new round begins, and what is being
// sent may finish within a grace, then is cancelled. Each worker's State holds `mutex`,
// `stopping` (guarded by it), `ioc`, `timer` (its wait between rounds), `grace`, `cancel`,
// `thread` and `outbound` (its client), and a `run()` coroutine that reads `stopping`.
#pragma once

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace tollgate::http {

/// At a stop: how long what is being sent may take before it is cancelled.
inline constexpr std::chrono::seconds kOwnLoopGrace{2};

/// Starts `s.run()` on `s.ioc`, and the thread `thread_name` that runs it; should it end by an
/// exception before a stop was asked, says "`what` stopped".
template <class State>
void startOwnLoop(State& s, const char* thread_name, std::string what) {
  namespace asio = boost::asio;
  asio::co_spawn(s.ioc, s.run(),
                 asio::bind_cancellation_slot(
                     s.cancel.slot(), [&s, what = std::move(what)](std::exception_ptr e) {
                       s.grace.cancel();
                       const std::lock_guard lock(s.mutex);
                       if (e && !s.stopping) {  // At a stop, a cancelled send ends it.
                         log::line(log::Level::Error, what + " stopped");
                       }
                     }));
  s.thread = std::thread([&s, thread_name] {
    nameThisThread(thread_name);
    s.ioc.run();
  });
}

/// Asks `s` to stop, cancels what is still being sent after kOwnLoopGrace, waits for its thread,
/// then closes its client's connections while their event loop still exists.
template <class State>
void stopOwnLoop(State& s) {
  namespace asio = boost::asio;
  {
    const std::lock_guard lock(s.mutex);
    s.stopping = true;
  }
  asio::post(s.ioc, [&s] {
    s.timer.cancel();
    s.grace.expires_after(kOwnLoopGrace);
    s.grace.async_wait([&s](const boost::system::error_code& ec) {
      if (!ec) {
        s.cancel.emit(asio::cancellation_type::terminal);
      }
    });
  });
  s.thread.join();
  s.outbound.reset();
}

}  // namespace tollgate::http
