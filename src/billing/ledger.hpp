// The gateway's one writer of money. Each gateway keeps, per team, an escrow: an amount reserved
// in the store (a row of `holds`, counted in the team's `reserved`) from which it admits
// requests in memory. A request whose maximum cost the escrow at hand cannot cover asks the store
// for the difference (one conditional update, exact across gateways); what a settled request did
// not cost goes back to the escrow, and an escrow unused for a second goes back to the balance.
// Settlements (and the store's part of holds) from every I/O thread are queued and committed by
// a thread of its own: whatever is queued goes into one transaction as soon as the previous
// commit ends (natural group commit). Coroutines await their own operation; no I/O thread touches
// the database. The thread also reclaims the holds of gateways that died and prunes old spend
// rows. The escrows' accounting is EscrowBook's (escrow.hpp); a SQLite store's checkpoints are
// store::Checkpointer's.
//
// A gateway taken for dead (it stopped heartbeating for Lease::kDeadAfter) has its holds
// reclaimed by another. So the escrow at hand is spent in memory only while this gateway's
// heartbeats are trusted and the escrow's row was found in the store since the last gap; else
// the store is asked, which finds a reclaimed row gone and starts a new one. A request admitted
// on a hold that is gone by its settlement is charged only what the team has available.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "billing/escrow.hpp"
#include "core/lease.hpp"
#include "core/money.hpp"
#include "store/checkpointer.hpp"
#include "store/store.hpp"
#include "store/store_work.hpp"

namespace tollgate::billing {

class Ledger final : public store::StoreWork {
 public:
  struct Options {
    std::string gateway_id;               ///< This gateway's id in the store's registry.
    std::int64_t retention_days = 0;      ///< Raw spend rows older than this are pruned; 0: never.
    std::int64_t cache_retention_ms = 0;  ///< Cache entries older than this are pruned; 0: never.
    /// Idempotency-Key records older than this are pruned; 0: never.
    std::int64_t idempotency_window_ms = 0;
    std::int64_t audit_retention_days = 0;  ///< Audit rows older than this are pruned; 0: never.
  };

  /// What became of a hold: taken, or why not (with what the team has available).
  enum class HoldStatus { Held, Insufficient, Suspended, Unavailable };
  struct HoldReply {
    HoldStatus status = HoldStatus::Unavailable;
    money::Pico available = 0;
    store::Hold hold;  ///< When held: the escrow row it is part of, the team, the amount.
  };

  /// Connects, forgets this host's dead gateways and reclaims the holds they left, then starts
  /// the writer thread. `lease` says how recently this gateway's heartbeats committed.
  /// Throws StoreError when the store cannot be reached.
  Ledger(store::Location where, Options options, const Lease& lease);
  /// Commits what is queued, gives the escrows back to their balances, then stops, and says on
  /// stdout how many operations its commits held on average.
  ~Ledger() override;
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  /// Reserves `amount` of the team's balance for one request: at once from the escrow when it
  /// has that much at hand, else through the store.
  boost::asio::awaitable<HoldReply> hold(std::string team_id, money::Pico amount);
  /// Debits the charge out of its hold and writes its spend row, in one transaction; true once
  /// committed, false when the store failed (the hold is then given back). When the hold was
  /// reclaimed meanwhile, an answer that is `withholdable` is refused (false) unless the team's
  /// available balance covers it; one that is not is charged what the balance covers.
  /// With `idempotency`, the Idempotency-Key's record is completed in the same transaction.
  boost::asio::awaitable<bool> settle(
      store::Hold h, store::SpendRow row, bool withholdable,
      std::optional<store::Settlement::Completion> idempotency = std::nullopt);
  /// Writes the spend row of a request that charged nothing (a cache hit), with the next commit;
  /// no one waits for it.
  void record(store::SpendRow row);
  /// Gives an unsettled hold back to its escrow (no store write).
  void release(const store::Hold& h);

  boost::asio::awaitable<bool> run(Task task) override;
  void post(Task task) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Reply {
    bool committed = false;
    store::HoldOutcome hold;
    store::SettleOutcome settled = store::SettleOutcome::Kept;
    store::Hold granted;  ///< Hold: the escrow row, the team and the amount.
  };
  enum class Kind { Hold, Settle, Task };
  struct Op {
    Kind kind = Kind::Hold;
    store::Hold hold;
    EscrowBook::Draw draw;  ///< Hold: what its escrow lent it, and the escrow's row.
    store::SpendRow row;
    bool withholdable = false;  ///< Settle: the answer can still be refused.
    std::optional<store::Settlement::Completion> idempotency;  ///< Settle: a claim completed.
    Task task;                                                 ///< Task: the work.
    /// Resumes the waiter on its own event loop.
    std::function<void(Reply)> done;
  };

  /// The writer's connection, made again after a failure dropped it.
  store::Store& store();
  /// Runs `body` on the writer's connection in one transaction; false when it failed (said on
  /// stderr after `failing`), the connection then dropped if the store itself failed.
  template <typename Body>
  bool transact(const std::string& failing, Body&& body);
  boost::asio::awaitable<Reply> submit(Op op);
  void enqueue(Op op);
  void run();
  /// Commits `ops` in one transaction, their replies marked committed; false when it failed
  /// (the connection is dropped when the store itself failed).
  bool apply(std::span<Op> ops, std::span<Reply> replies);
  /// One team's operations of a batch: its holds in order, then its settlements together (one
  /// update per hold, team and aggregate row for all of them).
  void applyTeam(store::Store& db, std::span<const Op> ops, std::span<Reply> replies);
  void commit(std::deque<Op>& batch);
  /// Runs the posted tasks while nothing else is queued, a bounded number per transaction.
  void runPosted();
  /// Takes from the escrow at hand what it can of each hold's amount, before the store is asked
  /// for the rest.
  void drawFromEscrows(std::span<Op> ops);
  /// What the store did with `op`, applied to its escrow; `epoch` is the Lease epoch read
  /// before the store was asked.
  void account(const Op& op, const Reply& reply, std::uint64_t epoch);
  /// Gives back to the balances what the escrows hold at hand: those unused for a while, or all.
  void returnEscrows(bool all);
  void maintain();
  /// Forgets raw spend rows, cache entries and Idempotency-Key records past their time.
  void prune();

  store::Location where_;
  Options options_;
  const Lease& lease_;
  std::unique_ptr<store::Store> db_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Op> queue_;
  std::deque<Task> posted_;  ///< Guarded by mu_.
  bool stop_ = false;
  std::mutex escrow_mu_;
  EscrowBook escrows_;  ///< Guarded by escrow_mu_.
  // Batches committed, what they held, and the largest (writer thread only; printed at the end).
  std::int64_t commits_ = 0;
  std::int64_t operations_ = 0;
  std::int64_t largest_commit_ = 0;
  std::thread thread_;
  std::unique_ptr<store::Checkpointer> checkpointer_;
};

}  // namespace tollgate::billing
