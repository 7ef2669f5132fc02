// The SQLite engine's checkpoints, on a thread of their own: the writers' connections leave them
// out (relaxDurability), so a commit never waits for the database file to be written; this thread
// moves the write-ahead log into it every 200 ms. PostgreSQL keeps its own, so it needs none.
#pragma once

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "store/connection.hpp"

namespace tollgate::store {

class Checkpointer {
 public:
  /// Starts checkpointing the store at `where` (connecting on the thread, again after a failure).
  explicit Checkpointer(Location where);
  /// Stops after the checkpoint in progress, if any.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

 private:
  void run();

  Location where_;
  std::mutex mu_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;
};

/// A checkpointer for a store whose engine wants one (SQLite); nullptr for PostgreSQL.
std::unique_ptr<Checkpointer> checkpointerFor(const Location& where);

}  // namespace tollgate::store
