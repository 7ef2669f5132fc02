// A deadline for a socket's waits that costs no timer operation per request. Beast's stream
// timeout starts a wait on a timer with every read and cancels it at the next change of the
// expiry: on a keep-alive connection, a schedule, a cancellation and a cancelled handler's run
// per request, more than the parsing of a request's head. This timer is armed once, and again
// only when it fires before the deadline (which has moved later since) or when the deadline
// moves earlier than it. When the deadline passes, the socket's pending operations are
// cancelled and expired() says why they ended.
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

namespace tollgate::net {

class LazyDeadline {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LazyDeadline(boost::asio::ip::tcp::socket& socket)
      : timer_(socket.get_executor()), state_(std::make_shared<State>(State{&socket, this})) {}
  ~LazyDeadline() {
    state_->owner = nullptr;
    timer_.cancel();
  }
  LazyDeadline(const LazyDeadline&) = delete;
  LazyDeadline& operator=(const LazyDeadline&) = delete;

  /// The socket's waits end at `at` (and expired() is false until then).
  void set(Clock::time_point at) {
    state_->deadline = at;
    state_->expired = false;
    if (!state_->armed || timer_.expiry() > at) {
      arm();
    }
  }
  /// No deadline: the timer, if armed, stops when it next fires.
  void clear() {
    state_->deadline = Clock::time_point::max();
    state_->expired = false;
  }
  /// The deadline has passed: pending operations were cancelled, and new ones must not start.
  bool expired() const {
    return state_->expired ||
           (state_->deadline != Clock::time_point::max() && Clock::now() >= state_->deadline);
  }

 private:
  struct State {
    boost::asio::ip::tcp::socket* socket;
    LazyDeadline* owner;  ///< Null once the socket's owner is gone.
    Clock::time_point deadline = Clock::time_point::max();
    bool armed = false;
    bool expired = false;
  };

  void arm() {
    state_->armed = true;
    timer_.expires_at(state_->deadline);
    timer_.async_wait([state = state_](const boost::system::error_code& ec) {
      if (state->owner == nullptr || ec == boost::asio::error::operation_aborted) {
        return;  // Gone, or re-armed (arm() cancelled this wait).
      }
      state->armed = false;
      if (state->deadline == Clock::time_point::max()) {
        return;  // No deadline now: the next set() arms it again.
      }
      if (Clock::now() < state->deadline) {
        state->owner->arm();  // Moved later since it was armed: wait for what remains.
        return;
      }
      state->expired = true;
      boost::system::error_code ignored;
      state->socket->cancel(ignored);
    });
  }

  boost::asio::steady_timer timer_;
  std::shared_ptr<State> state_;
};

}  // namespace tollgate::net
