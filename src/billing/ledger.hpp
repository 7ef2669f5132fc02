// The gateway's one writer of money. Holds, settlements and releases from every I/O thread are
// queued and committed by a thread of its own: whatever is queued goes into one transaction as
// soon as the previous commit ends (natural group commit), so a busy gateway commits in batches
// and an idle one at once. Coroutines await their own operation; no I/O thread touches the
// database. The thread also reclaims the holds of gateways that died and prunes old spend rows.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>

#include "core/money.hpp"
#include "store/store.hpp"

namespace tollgate::billing {

class Ledger {
 public:
  struct Options {
    std::string gateway_id;           ///< This gateway's id in the store's registry.
    std::int64_t retention_days = 0;  ///< Raw spend rows older than this are pruned; 0: never.
  };

  /// What became of a hold: taken, or why not (with what the team has available).
  enum class HoldStatus { Held, Insufficient, Suspended, Unavailable };
  struct HoldReply {
    HoldStatus status = HoldStatus::Unavailable;
    money::Pico available = 0;
  };

  /// Connects, forgets this host's dead gateways and reclaims the holds they left, then starts
  /// the writer thread. Throws StoreError when the store cannot be reached.
  Ledger(store::Location where, Options options);
  /// Commits what is queued, then stops, and says on stdout how many operations its commits
  /// held on average.
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  /// Reserves `h.amount` of `h.team_id`'s balance if it covers it.
  boost::asio::awaitable<HoldReply> hold(store::Hold h);
  /// Debits the charge, writes its spend row and drops its hold, in one transaction; true once
  /// committed, false when the store failed (the hold is then released later).
  boost::asio::awaitable<bool> settle(store::Hold h, store::SpendRow row);
  /// Drops a hold without a charge; retried until the store takes it.
  void release(store::Hold h);

 private:
  struct Reply {
    bool committed = false;
    store::HoldOutcome hold;
  };
  enum class Kind { Hold, Settle, Release };
  struct Op {
    Kind kind = Kind::Release;
    store::Hold hold;
    store::SpendRow row;
    /// Resumes the waiter on its own event loop; empty for releases.
    std::function<void(Reply)> done;
  };

  /// The writer's connection, made again after a failure dropped it.
  store::Store& store();
  boost::asio::awaitable<Reply> submit(Op op);
  void enqueue(Op op);
  void run();
  /// Commits `ops` in one transaction, their replies marked committed; false when it failed
  /// (the connection is dropped when the store itself failed).
  bool apply(std::span<Op> ops, std::span<Reply> replies);
  void commit(std::deque<Op>& batch);
  void maintain();
  static void complete(Op& op, Reply reply);

  store::Location where_;
  Options options_;
  std::unique_ptr<store::Store> db_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Op> queue_;
  std::deque<Op> retry_;  ///< Releases a failed batch left behind (writer thread only).
  bool stop_ = false;
  // Batches committed, what they held, and the largest (writer thread only; printed at the end).
  std::int64_t commits_ = 0;
  std::int64_t operations_ = 0;
  std::int64_t largest_commit_ = 0;
  std::thread thread_;
};

}  // namespace tollgate::billing
