// The store's writer: one thread and one connection per store that every write of the request
// path goes through, so no I/O thread touches the database and, on SQLite, there is one writer.
// Its work comes in three kinds, run in this order each time it wakes:
//   1. journals' batches: a Journal (billing's ledger; later a book of rate-limit leases) queues
//      its own operations and commits whatever is queued in one transaction as soon as the
//      previous commit ends (natural group commit): charges first;
//   2. tasks someone awaits (an Idempotency-Key's claim, a cache read the memory did not have),
//      all of them in one transaction;
//   3. posted tasks no one waits for (cache entries, released claims), while nothing of the
//      above is queued, a bounded number per transaction: never in front of a charge.
// When idle it lets its journals give back what they hold unused, and prunes rows past their
// retention. A SQLite store's checkpoints are store::Checkpointer's.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "store/checkpointer.hpp"
#include "store/connection.hpp"
#include "store/journal.hpp"
#include "store/store_work.hpp"
#include "store/waiter.hpp"

namespace tollgate::store {

/// How the store's writer paces its work.
struct WriterPacing {
  /// A round (what is queued, committed) begins no sooner than this after the previous one
  /// began: at moderate rates one commit then takes what several wake-ups would have had one
  /// each (a commit costs tens of system calls whatever it holds), and an idle writer begins
  /// at once. Each charge waits for its round's commit as before.
  std::chrono::microseconds round_spacing{250};
  /// See Checkpointer (SQLite).
  std::int64_t longest_log_bytes = kLongestLogBytes;
};

class Writer final : public StoreWork {
 public:
  /// How long rows are kept before they are pruned; 0: for ever.
  struct Retention {
    std::int64_t spend_days = 0;      ///< Raw spend rows (the daily aggregates stay).
    std::int64_t audit_days = 0;      ///< Audit rows.
    std::int64_t cache_ms = 0;        ///< Cache entries.
    std::int64_t idempotency_ms = 0;  ///< Idempotency-Key records.
    std::int64_t alert_days = 0;      ///< The alerts' outbox (kAlertRetentionDays).
  };

  /// Connects (throws StoreError when the store cannot be reached), then starts the thread.
  Writer(Location where, Retention retention, WriterPacing pacing = {});
  /// Runs what is queued and posted, then stops. Every journal must have been detached.
  ~Writer() override;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  boost::asio::awaitable<bool> run(Task task) override;
  void post(Task task) override;

  /// Adds `journal` once `open` (given the writer's connection, in no transaction) has run on the
  /// thread; blocks until then, and throws what `open` threw.
  void attach(Journal& journal, const std::function<void(Connection&)>& open);
  /// Commits what `journal` has queued, lets it give everything back (tick(true)), and removes
  /// it; blocks until then.
  void detach(Journal& journal);
  /// A journal has queued work: it runs before what is awaited or posted.
  void wake();

  /// Journals only, on the writer's thread: runs `body` in one transaction; false when it failed
  /// (said on stderr after `failing`), the connection then dropped if the store itself failed.
  bool transact(std::string_view failing, const std::function<void(Connection&)>& body);
  /// Journals only: whether the connection is up (false after a failure of the store itself).
  bool connected() const { return c_ != nullptr; }

 private:
  using Clock = std::chrono::steady_clock;
  struct Awaited {
    Task task;
    Waiter<bool> waiter;
  };

  Connection& connection();
  /// Runs `fn` on the writer's thread and waits for it; rethrows what it threw.
  void call(std::function<void()> fn);
  void loop();
  /// Runs the awaited tasks in one transaction (each alone should that fail with the store up).
  void runAwaited(std::vector<Awaited>& awaited);
  /// Runs the posted tasks while nothing else is queued, a bounded number per transaction.
  void runPosted();
  /// Whether anything is queued before posted work (under mu_).
  bool urgentLocked() const { return woken_ || !awaited_.empty() || !calls_.empty(); }
  /// Forgets rows past their retention.
  void prune();

  Location where_;
  Retention retention_;
  WriterPacing pacing_;
  std::unique_ptr<Connection> c_;   ///< The writer thread's (and, before it starts, the maker's).
  std::vector<Journal*> journals_;  ///< Writer thread only.
  std::mutex mu_;
  std::condition_variable wake_;
  bool woken_ = false;  ///< A journal has queued work. Guarded by mu_, as the three below.
  std::vector<Awaited> awaited_;
  std::deque<Task> posted_;
  std::deque<std::function<void()>> calls_;
  bool stop_ = false;
  std::thread thread_;
  std::unique_ptr<Checkpointer> checkpointer_;
};

}  // namespace tollgate::store
