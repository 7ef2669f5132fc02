// The gateway's book of money. Each gateway keeps, per team, an escrow: an amount reserved in
// the store (a row of `holds`, counted in the team's `reserved`) from which it admits requests in
// memory. A request whose maximum cost the escrow at hand cannot cover asks the store for the
// difference (one conditional update, exact across gateways); what a settled request did not cost
// goes back to the escrow, and an escrow unused for a second goes back to the balance.
// Settlements (and the store's part of holds) from every I/O thread are queued here and committed
// by the store's writer (store/writer.hpp), whose journal the ledger is: whatever is queued goes
// into one transaction as soon as the previous commit ends (natural group commit), before any
// other work of the writer's. Coroutines await their own operation; no I/O thread touches the
// database. On the writer's idle ticks the ledger gives idle escrows back and reclaims the holds
// of gateways that died. The escrows' accounting is EscrowBook's (escrow.hpp).
//
// A gateway taken for dead (it stopped heartbeating for Lease::kDeadAfter) has its holds
// reclaimed by another. So the escrow at hand is spent in memory only while this gateway's
// heartbeats are trusted and the escrow's row was found in the store since the last gap; else
// the store is asked, which finds a reclaimed row gone and starts a new one. A request admitted
// on a hold that is gone by its settlement is charged only what the team has available.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "billing/escrow.hpp"
#include "core/lease.hpp"
#include "core/money.hpp"
#include "store/billing_store.hpp"
#include "store/journal.hpp"
#include "store/waiter.hpp"

namespace tollgate::store {
class Writer;
}  // namespace tollgate::store

namespace tollgate::billing {

/// Told, on the store writer's thread right after a commit succeeded, what it committed: each
/// spend row as written (its `cost` what was debited, its `uncollected` what was not), and how
/// many operations the batch held and how long its transaction took. Must not block.
class CommitListener {
 public:
  virtual ~CommitListener() = default;
  virtual void spent(const store::SpendRow& row) = 0;
  virtual void batch(std::size_t operations, std::chrono::microseconds took) = 0;
};

class Ledger final : public store::Journal {
 public:
  /// What became of a hold: taken, or why not (with what the team has available).
  enum class HoldStatus { Held, Insufficient, Suspended, Unavailable };
  struct HoldReply {
    HoldStatus status = HoldStatus::Unavailable;
    money::Pico available = 0;
    store::Hold hold;  ///< When held: the escrow row it is part of, the team, the amount.
  };

  /// Reclaims the holds dead gateways left (the key follower has forgotten this host's), then
  /// becomes a journal of `writer`. `gateway_id` is this gateway's id in the store's registry;
  /// `lease` says how recently its heartbeats committed. Throws StoreError when the store fails.
  Ledger(store::Writer& writer, std::string gateway_id, const Lease& lease);
  /// Commits what is queued, gives the escrows back to their balances, leaves the writer, and
  /// says on stdout how many operations its commits held on average.
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
  /// With `idempotency`, the Idempotency-Key's record is completed in the same transaction; with
  /// `key_spend`, the charge is added to the key's spend in its budget's window.
  boost::asio::awaitable<bool> settle(
      store::Hold h, store::SpendRow row, bool withholdable,
      std::optional<store::Settlement::Completion> idempotency = std::nullopt,
      std::optional<store::Settlement::KeySpend> key_spend = std::nullopt);
  /// Writes the spend row of a request that charged nothing (a cache hit), with the next commit;
  /// no one waits for it.
  void record(store::SpendRow row);
  /// Gives an unsettled hold back to its escrow (no store write).
  void release(const store::Hold& h);

  /// Tells `listener` (which outlives the ledger) of every commit from now on; set before the
  /// ledger is used.
  void listen(CommitListener& listener) { listener_ = &listener; }
  /// Writes an alert's event with each settlement that takes a team's balance below one of
  /// `amounts` ([alerts] balance_below_usd); set before the ledger is used.
  void alertBelow(std::vector<money::Pico> amounts) { balance_alerts_ = std::move(amounts); }
  /// Writes an alert's event with each settlement that takes a key's spend in its budget's window
  /// past one of `ppm` ([alerts] key_budget_fractions, in parts per million); set before use.
  void alertKeyBudgets(std::vector<std::int64_t> ppm) { key_alerts_ppm_ = std::move(ppm); }

  /// Holds taken and not yet settled or released, and what they hold.
  struct InFlight {
    std::int64_t holds = 0;
    money::Pico amount = 0;
  };
  InFlight inFlight() const;

  /// The writer's thread: commits what is queued, holds and settlements, in one batch.
  bool commit() override;
  /// The writer's thread: gives back escrows unused for a while (all of them when `closing`),
  /// and every few seconds reclaims the holds of gateways taken for dead.
  void tick(bool closing) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct Reply {
    bool committed = false;
    store::HoldOutcome hold;
    store::SettleOutcome settled = store::SettleOutcome::Kept;
    store::Hold granted;  ///< Hold: the escrow row, the team and the amount.
    /// Settle: what its spend row was written with (debited, and what the balance could not
    /// cover), once the batch committed.
    struct Written {
      money::Pico cost = 0;
      money::Pico uncollected = 0;
    } written;
  };
  enum class Kind { Hold, Settle };
  struct Op {
    Kind kind = Kind::Hold;
    store::Hold hold;
    EscrowBook::Draw draw;  ///< Hold: what its escrow lent it, and the escrow's row.
    store::SpendRow row;
    bool withholdable = false;  ///< Settle: the answer can still be refused.
    std::optional<store::Settlement::Completion> idempotency;  ///< Settle: a claim completed.
    std::optional<store::Settlement::KeySpend> key_spend;      ///< Settle: a key's budget.
    /// Who awaits the reply; none for a row no one waits for.
    store::Waiter<Reply> waiter;
  };

  /// Queues `op` (moved from as it is queued, before the first suspension: the caller's frame
  /// holds it until then) and awaits its reply.
  boost::asio::awaitable<Reply> submit(Op& op);
  void enqueue(Op&& op);
  /// Commits `ops` in one transaction, their replies marked committed; false when it failed
  /// (the connection is dropped when the store itself failed).
  bool apply(std::span<Op> ops, std::span<Reply> replies);
  /// One team's operations of a batch: its holds in order, then its settlements together (one
  /// update per hold, team and aggregate row for all of them).
  void applyTeam(store::BillingStore& db, std::span<Op> ops, std::span<Reply> replies);
  /// Takes from the escrow at hand what it can of each hold's amount, before the store is asked
  /// for the rest.
  void drawFromEscrows(std::span<Op> ops);
  /// What the store did with `op`, applied to its escrow; `epoch` is the Lease epoch read
  /// before the store was asked.
  void account(const Op& op, const Reply& reply, std::uint64_t epoch);
  /// Gives back to the balances what the escrows hold at hand: those unused for a while, or all.
  void returnEscrows(bool all);

  store::Writer& writer_;
  std::string gateway_id_;
  const Lease& lease_;
  CommitListener* listener_ = nullptr;
  std::vector<money::Pico> balance_alerts_;
  std::vector<std::int64_t> key_alerts_ppm_;
  std::mutex mu_;
  std::deque<Op> queue_;  ///< Guarded by mu_.
  mutable std::mutex escrow_mu_;
  EscrowBook escrows_;  ///< Guarded by escrow_mu_.
  InFlight in_flight_;  ///< Guarded by escrow_mu_.
  // Batches committed, what they held, and the largest (writer thread only; printed at the end).
  std::int64_t commits_ = 0;
  std::int64_t operations_ = 0;
  std::int64_t largest_commit_ = 0;
  Clock::time_point last_reclaim_ = Clock::now();  ///< Writer thread only.
};

}  // namespace tollgate::billing
