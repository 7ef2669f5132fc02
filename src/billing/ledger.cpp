#include "billing/ledger.hpp"

#include <algorithm>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <iterator>
#include <limits>
#include <span>
#include <vector>

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace tollgate::billing {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

constexpr std::int64_t kDeadAfterMs = Lease::kDeadAfter.count();
constexpr std::chrono::seconds kReclaimEvery{5};
/// An escrow unused this long goes back to its team's balance, for the team's other gateways.
constexpr std::chrono::seconds kEscrowIdle{1};
/// When the store is asked for a hold, it is asked for this many more of the same too (granted
/// up to a quarter of what the team has left), so that the next requests find them at hand...
constexpr std::int64_t kEscrowRequests = 8;
/// ...but only while the team has this many more left: near the end of a balance every gateway
/// holds only what its requests in flight need, so none is refused for money another keeps idle.
constexpr std::int64_t kEscrowPlentyRequests = 100;

/// `n` times `amount`, saturated.
money::Pico times(std::int64_t n, money::Pico amount) {
  return money::times(n, amount).value_or(std::numeric_limits<money::Pico>::max());
}
constexpr std::chrono::hours kPruneEvery{1};
/// Posted tasks run this many to a transaction at most, so that a charge queued meanwhile waits
/// for little.
constexpr std::size_t kPostedPerCommit = 32;
constexpr std::int64_t kMsPerDay = 86'400'000;

}  // namespace

Ledger::Ledger(store::Location where, Options options, const Lease& lease)
    : where_(std::move(where)), options_(std::move(options)), lease_(lease) {
  // The key follower has registered this gateway and forgotten this host's dead ones: their
  // holds go back now.
  {
    store::Transaction tx(store().connection());
    db_->reclaimHolds(kDeadAfterMs);
    tx.commit();
  }
  thread_ = std::thread([this] { run(); });
  checkpointer_ = store::checkpointerFor(where_);
}

Ledger::~Ledger() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  checkpointer_.reset();
  if (commits_ > 0) {
    // How much the group commit gathered, for operators and the benchmark.
    std::printf(
        "tollgate: ledger: %lld operations in %lld commits (%.1f per commit, at most %lld)\n",
        static_cast<long long>(operations_), static_cast<long long>(commits_),
        static_cast<double>(operations_) / static_cast<double>(commits_),
        static_cast<long long>(largest_commit_));
    std::fflush(stdout);
  }
}

store::Store& Ledger::store() {
  if (!db_) {
    db_ = std::make_unique<store::Store>(store::connect(where_));
    db_->connection().relaxDurability();
  }
  return *db_;
}

asio::awaitable<Ledger::Reply> Ledger::submit(Op op) {
  co_return co_await asio::async_initiate<decltype(asio::use_awaitable), void(Reply)>(
      [this](auto handler, Op op) {
        // The tracked executor keeps the waiter's event loop running until the reply is posted.
        auto work = asio::prefer(asio::get_associated_executor(handler),
                                 asio::execution::outstanding_work.tracked);
        auto waiter = std::make_shared<decltype(handler)>(std::move(handler));
        op.done = [work, waiter](Reply r) {
          asio::post(work, [waiter, r]() mutable { std::move (*waiter)(r); });
        };
        enqueue(std::move(op));
      },
      asio::use_awaitable, std::move(op));
}

asio::awaitable<Ledger::HoldReply> Ledger::hold(std::string team_id, money::Pico amount) {
  {
    const auto now = Clock::now();
    std::lock_guard lock(escrow_mu_);
    if (auto held = escrows_.take(team_id, amount, lease_.trusted(now), now)) {
      co_return HoldReply{HoldStatus::Held, 0, std::move(*held)};
    }
  }
  Op op;
  op.kind = Kind::Hold;
  op.hold = {"", std::move(team_id), amount};
  const Reply r = co_await submit(std::move(op));
  if (!r.committed) {
    co_return HoldReply{HoldStatus::Unavailable, 0, {}};
  }
  const HoldStatus status = r.hold.held           ? HoldStatus::Held
                            : !r.hold.team_active ? HoldStatus::Suspended
                                                  : HoldStatus::Insufficient;
  co_return HoldReply{status, r.hold.available, r.hold.held ? r.granted : store::Hold{}};
}

asio::awaitable<bool> Ledger::settle(store::Hold h, store::SpendRow row, bool withholdable,
                                     std::optional<store::Settlement::Completion> idempotency) {
  Op op;
  op.kind = Kind::Settle;
  op.hold = std::move(h);
  op.row = std::move(row);
  op.withholdable = withholdable;
  op.idempotency = std::move(idempotency);
  const Reply r = co_await submit(std::move(op));
  co_return r.committed&& r.settled != store::SettleOutcome::Withheld;
}

void Ledger::record(store::SpendRow row) {
  Op op;
  op.kind = Kind::Settle;
  op.hold = {"", row.team_id, 0};  // No hold: the store writes the row alone.
  op.row = std::move(row);
  enqueue(std::move(op));
}

asio::awaitable<bool> Ledger::run(Task task) {
  Op op;
  op.kind = Kind::Task;
  op.task = std::move(task);
  const Reply r = co_await submit(std::move(op));
  co_return r.committed;
}

void Ledger::post(Task task) {
  {
    std::lock_guard lock(mu_);
    posted_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void Ledger::release(const store::Hold& h) {
  std::lock_guard lock(escrow_mu_);
  escrows_.give(h.team_id, h.id, h.amount);
}

void Ledger::enqueue(Op op) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(op));
  }
  wake_.notify_one();
}

void Ledger::drawFromEscrows(std::span<Op> ops) {
  const auto now = Clock::now();
  std::lock_guard lock(escrow_mu_);
  for (Op& op : ops) {
    if (op.kind == Kind::Hold) {
      op.draw = escrows_.draw(op.hold.team_id, op.hold.amount, now);
      op.hold.id = op.draw.hold_id;
    }
  }
}

template <typename Body>
bool Ledger::transact(const std::string& failing, Body&& body) {
  try {
    store::Transaction tx(store().connection());
    body(*db_);
    tx.commit();
    return true;
  } catch (const std::exception& e) {
    log::line(log::Level::Error, failing + ": " + e.what());
    const auto* store_error = dynamic_cast<const store::StoreError*>(&e);
    if (store_error == nullptr || store_error->kind() == store::StoreError::Kind::Unavailable) {
      db_.reset();  // Connect again next time.
    }
    return false;
  }
}

void Ledger::applyTeam(store::Store& db, std::span<const Op> ops, std::span<Reply> replies) {
  std::vector<store::Settlement> settling;
  std::vector<std::size_t> settled_at;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.kind == Kind::Task) {
      op.task(db);
    } else if (op.kind == Kind::Hold) {
      replies[i].hold = db.hold({op.hold.id, op.hold.team_id, op.hold.amount - op.draw.lent},
                                options_.gateway_id, times(kEscrowRequests, op.hold.amount),
                                times(kEscrowPlentyRequests, op.hold.amount), op.draw.existing);
    } else {
      settling.push_back({op.hold.id, op.row, op.withholdable, op.idempotency});
      settled_at.push_back(i);
    }
  }
  if (settling.empty()) {
    return;
  }
  const std::vector<store::SettleOutcome> outcomes = db.settle(settling);
  for (std::size_t k = 0; k < outcomes.size(); ++k) {
    replies[settled_at[k]].settled = outcomes[k];
  }
}

bool Ledger::apply(std::span<Op> ops, std::span<Reply> replies) {
  const bool committed =
      transact("the ledger could not commit " + std::to_string(ops.size()) + " operations",
               [&](store::Store& db) {
                 // The batch is sorted by team: each team's operations go together.
                 for (std::size_t i = 0; i < ops.size();) {
                   std::size_t end = i + 1;
                   while (end < ops.size() && ops[end].hold.team_id == ops[i].hold.team_id) {
                     ++end;
                   }
                   applyTeam(db, ops.subspan(i, end - i), replies.subspan(i, end - i));
                   i = end;
                 }
               });
  if (!committed) {
    return false;
  }
  for (Reply& r : replies) {
    r.committed = true;
  }
  ++commits_;
  operations_ += static_cast<std::int64_t>(ops.size());
  largest_commit_ = std::max(largest_commit_, static_cast<std::int64_t>(ops.size()));
  return true;
}

void Ledger::account(const Op& op, const Reply& reply, std::uint64_t epoch) {
  if (op.kind == Kind::Task || op.hold.id.empty()) {
    return;  // No escrow involved: work of the store's, or a row that charged nothing.
  }
  const std::string& team = op.hold.team_id;
  std::lock_guard lock(escrow_mu_);
  if (!reply.committed) {
    // A hold not taken gives back what its escrow lent; a charge not recorded leaves its hold to
    // its Charge, which releases it.
    if (op.kind == Kind::Hold) {
      escrows_.give(team, op.hold.id, op.draw.lent);
    }
    return;
  }
  if (op.kind == Kind::Hold) {
    if (reply.hold.gone) {
      escrows_.gone(team, op.hold.id);
    } else if (reply.hold.held) {
      escrows_.granted(team, op.hold.id, reply.hold.extra, epoch);
    } else {
      escrows_.refused(team, op.draw, epoch);
    }
  } else if (reply.settled == store::SettleOutcome::Kept) {
    escrows_.settled(team, op.hold.id, op.hold.amount - op.row.cost, epoch);
  } else {
    escrows_.gone(team, op.hold.id);
  }
}

void Ledger::commit(std::deque<Op>& batch) {
  // One order of team rows for every batch of every gateway: two gateways' transactions never
  // wait for each other's locks in a cycle.
  std::stable_sort(batch.begin(), batch.end(),
                   [](const Op& a, const Op& b) { return a.hold.team_id < b.hold.team_id; });
  std::vector<Op> ops(std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
  drawFromEscrows(ops);
  const std::uint64_t epoch = lease_.epoch();
  std::vector<Reply> replies(ops.size());
  if (!apply(ops, replies) && ops.size() > 1 && db_) {
    // The store is there but refused one of them: each on its own, so that one request's
    // failure is not every other one's.
    for (std::size_t i = 0; i < ops.size() && db_; ++i) {
      apply(std::span(ops).subspan(i, 1), std::span(replies).subspan(i, 1));
    }
  }
  std::deque<Op> again;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    Reply& r = replies[i];
    account(ops[i], r, epoch);
    if (r.committed && ops[i].kind == Kind::Hold && r.hold.gone) {
      // Its escrow was reclaimed: asked again, whole, of the escrow made in its place.
      ops[i].draw = {};
      again.push_back(std::move(ops[i]));
      continue;
    }
    if (!r.committed) {
      r = Reply{};
    } else if (ops[i].kind == Kind::Hold) {
      // The escrow's part counts as available to this request, whatever the store said.
      r.hold.available += ops[i].draw.lent;
    }
    r.granted = ops[i].hold;
    if (ops[i].done) {
      ops[i].done(r);
    }
  }
  if (!again.empty()) {
    std::lock_guard lock(mu_);
    queue_.insert(queue_.begin(), std::make_move_iterator(again.begin()),
                  std::make_move_iterator(again.end()));
  }
}

void Ledger::runPosted() {
  for (;;) {
    std::vector<Task> tasks;
    {
      std::lock_guard lock(mu_);
      if (!queue_.empty()) {
        return;  // Charges first.
      }
      while (!posted_.empty() && tasks.size() < kPostedPerCommit) {
        tasks.push_back(std::move(posted_.front()));
        posted_.pop_front();
      }
    }
    if (tasks.empty()) {
      return;
    }
    transact("posted work of the store's was lost (" + std::to_string(tasks.size()) + " tasks)",
             [&](store::Store& db) {
               for (const Task& task : tasks) {
                 task(db);
               }
             });
  }
}

void Ledger::returnEscrows(bool all) {
  std::vector<store::Hold> back;
  {
    std::lock_guard lock(escrow_mu_);
    back = escrows_.takeIdle(Clock::now(), kEscrowIdle, all);
  }
  if (back.empty()) {
    return;
  }
  std::vector<bool> kept(back.size(), false);
  const bool returned = transact("returning escrows failed (will retry)", [&](store::Store& db) {
    for (std::size_t i = 0; i < back.size(); ++i) {
      kept[i] = db.shrinkHold(back[i].id, back[i].amount);
    }
  });
  std::lock_guard lock(escrow_mu_);
  for (std::size_t i = 0; i < back.size(); ++i) {
    if (!returned) {
      escrows_.give(back[i].team_id, back[i].id, back[i].amount);
    } else if (!kept[i]) {
      escrows_.gone(back[i].team_id, back[i].id);  // Reclaimed meanwhile.
    }
  }
}

void Ledger::prune() {
  const std::int64_t now = store::nowMs();
  transact("pruning old rows failed (will retry)", [&](store::Store& db) {
    if (options_.retention_days > 0) {
      db.pruneSpend(now - options_.retention_days * kMsPerDay);
    }
    if (options_.audit_retention_days > 0) {
      db.pruneAudit(now - options_.audit_retention_days * kMsPerDay);
    }
    if (options_.cache_retention_ms > 0) {
      db.pruneCache(now - options_.cache_retention_ms);
    }
    if (options_.idempotency_window_ms > 0) {
      db.pruneIdempotencyKeys(now - options_.idempotency_window_ms);
    }
  });
}

void Ledger::maintain() {
  transact("reclaiming holds failed (will retry)",
           [](store::Store& db) { db.reclaimHolds(kDeadAfterMs); });
}

void Ledger::run() {
  nameThisThread("tg-ledger");
  auto last_reclaim = Clock::now();
  auto last_prune = Clock::now() - kPruneEvery;
  for (;;) {
    std::deque<Op> batch;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kEscrowIdle,
                     [&] { return stop_ || !queue_.empty() || !posted_.empty(); });
    }
    // Where the I/O threads share a CPU with this one, let them run first: they queue what their
    // ready connections hold, and one commit takes it all (else each commit would hold one).
    std::this_thread::yield();
    {
      std::lock_guard lock(mu_);
      batch.swap(queue_);
      stopping = stop_;
    }
    if (!batch.empty()) {
      commit(batch);
    }
    runPosted();
    if (stopping) {
      std::lock_guard lock(mu_);
      if (queue_.empty()) {
        break;
      }
      continue;
    }
    returnEscrows(false);
    if (Clock::now() - last_reclaim >= kReclaimEvery) {
      maintain();
      last_reclaim = Clock::now();
    }
    if (Clock::now() - last_prune >= kPruneEvery) {
      prune();
      last_prune = Clock::now();
    }
  }
  returnEscrows(true);
}

}  // namespace tollgate::billing
