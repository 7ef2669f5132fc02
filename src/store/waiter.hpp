// A coroutine awaiting a value another thread gives (store/reply.hpp makes and delivers them):
// light enough for the headers of those that keep waiters in their queues.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <utility>

namespace tollgate::store {

template <typename T>
class Deliveries;

/// Where a waiting coroutine resumes (an executor that keeps its event loop running until then)
/// and how. Given once, through Deliveries; empty when no one waits.
template <typename T>
class Waiter {
 public:
  /// Resumes the coroutine with its value; made, called and freed on the waiter's own thread.
  struct Resume {
    virtual ~Resume() = default;
    virtual void operator()(T value) = 0;
  };

  Waiter() = default;
  Waiter(boost::asio::any_io_executor home, std::unique_ptr<Resume> resume)
      : home_(std::move(home)), resume_(std::move(resume)) {}

  explicit operator bool() const { return resume_ != nullptr; }

 private:
  friend class Deliveries<T>;
  boost::asio::any_io_executor home_;
  std::unique_ptr<Resume> resume_;
};

}  // namespace tollgate::store
