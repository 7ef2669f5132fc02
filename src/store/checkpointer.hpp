// The SQLite engine's checkpoints, on a thread of their own: the writers' connections leave them
// out (relaxDurability), so a commit never waits for the database file to be written; this thread
// moves the write-ahead log into it every 50 ms. PostgreSQL keeps its own, so it needs none.
//
// Under steady writes that alone lets the log grow without end: it starts over only when a
// transaction begins with the whole log in the database, and a commit lands while each checkpoint
// syncs. So once the log is longer than a bound, the writer takes in the little that is left
// itself, on its own thread, right after this thread's checkpoint: nothing is committed meanwhile,
// and its next transaction starts the log over. The writer pauses for that checkpoint only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "store/connection.hpp"

namespace tollgate::store {

/// The write-ahead log's length past which the writer takes in the rest itself.
constexpr std::int64_t kLongestLogBytes = 64LL << 20;

class Checkpointer {
 public:
  /// Starts checkpointing the store at `where` (connecting on the thread, again after a failure);
  /// `writer_checkpoint` runs a checkpoint on the writer's thread and returns when it has.
  Checkpointer(Location where, std::function<void()> writer_checkpoint,
               std::int64_t longest_log_bytes);
  /// Stops after the checkpoint in progress, if any.
  ~Checkpointer();
  Checkpointer(const Checkpointer&) = delete;
  Checkpointer& operator=(const Checkpointer&) = delete;

 private:
  void run();

  Location where_;
  std::function<void()> writer_checkpoint_;
  std::int64_t longest_log_bytes_;
  std::mutex mu_;
  std::condition_variable stopped_;
  bool stop_ = false;
  std::thread thread_;
};

/// A checkpointer for a store whose engine wants one (SQLite); nullptr for PostgreSQL.
std::unique_ptr<Checkpointer> checkpointerFor(const Location& where,
                                              std::function<void()> writer_checkpoint,
                                              std::int64_t longest_log_bytes);

}  // namespace tollgate::store
