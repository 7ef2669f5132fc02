// The port through which what is not money reaches the store's writer: work a request waits for
// (an Idempotency-Key's claim, a cache read the memory did not have) and work no one waits for
// (cache entries, released claims). store::Writer implements it on its thread, after the charges,
// so no I/O thread touches the database and, on SQLite, there is one writer. A task is given the
// writer's connection and makes over it the part of the store it uses (e.g. CacheStore).
#pragma once

#include <boost/asio/awaitable.hpp>
#include <functional>

#include "store/connection.hpp"

namespace tollgate::store {

class StoreWork {
 public:
  using Task = std::function<void(Connection&)>;
  virtual ~StoreWork() = default;
  /// Runs `task` in the writer's next transaction for awaited work; true once that committed. A
  /// task must not throw but for a failure of the store itself (it would fail the transaction's
  /// other work).
  virtual boost::asio::awaitable<bool> run(Task task) = 0;
  /// Runs `task` once the writer has nothing else to do, in a transaction of its own: never in
  /// front of a charge. Lost (and said on stderr) if the store fails.
  virtual void post(Task task) = 0;
};

}  // namespace tollgate::store
