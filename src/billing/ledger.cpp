#include "billing/ledger.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <cstdio>
#include <iterator>
#include <span>
#include <vector>

namespace tollgate::billing {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

/// A gateway that has not heartbeaten for this long (by the store's clock) is dead: its holds go
/// back to the balance. Heartbeats come every 500 ms.
constexpr std::int64_t kDeadAfterMs = 10'000;
constexpr std::chrono::seconds kReclaimEvery{5};
constexpr std::chrono::hours kPruneEvery{1};
constexpr std::chrono::milliseconds kRetryAfterFailure{1'000};
constexpr std::int64_t kMsPerDay = 86'400'000;

std::string hostName() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("unknown");
}

/// Gateways registered from this host whose process is gone: they are dead now, not in
/// kDeadAfterMs (a gateway killed and restarted at once gets its holds back at start).
void forgetDeadLocalGateways(store::Store& db) {
  for (const store::GatewayRecord& g : db.gatewaysOn(hostName())) {
    if (g.pid > 0 && ::kill(static_cast<pid_t>(g.pid), 0) != 0 && errno == ESRCH) {
      db.unregisterGateway(g.id);
    }
  }
}

}  // namespace

Ledger::Ledger(store::Location where, Options options)
    : where_(std::move(where)), options_(std::move(options)) {
  {
    store::Transaction tx(store().connection());
    forgetDeadLocalGateways(*db_);
    db_->reclaimHolds(kDeadAfterMs);
    tx.commit();
  }
  thread_ = std::thread([this] { run(); });
}

Ledger::~Ledger() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
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

asio::awaitable<Ledger::HoldReply> Ledger::hold(store::Hold h) {
  Op op;
  op.kind = Kind::Hold;
  op.hold = std::move(h);
  const Reply r = co_await submit(std::move(op));
  if (!r.committed) {
    co_return HoldReply{HoldStatus::Unavailable, 0};
  }
  const HoldStatus status = r.hold.held           ? HoldStatus::Held
                            : !r.hold.team_active ? HoldStatus::Suspended
                                                  : HoldStatus::Insufficient;
  co_return HoldReply{status, r.hold.available};
}

asio::awaitable<bool> Ledger::settle(store::Hold h, store::SpendRow row) {
  Op op;
  op.kind = Kind::Settle;
  op.hold = std::move(h);
  op.row = std::move(row);
  co_return (co_await submit(std::move(op))).committed;
}

void Ledger::release(store::Hold h) {
  Op op;
  op.kind = Kind::Release;
  op.hold = std::move(h);
  enqueue(std::move(op));
}

void Ledger::enqueue(Op op) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(op));
  }
  wake_.notify_one();
}

void Ledger::complete(Op& op, Reply reply) {
  if (op.done) {
    op.done(reply);
    op.done = nullptr;
  }
}

bool Ledger::apply(std::span<Op> ops, std::span<Reply> replies) {
  try {
    store::Transaction tx(store().connection());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      Op& op = ops[i];
      switch (op.kind) {
        case Kind::Hold:
          replies[i].hold = db_->hold(op.hold, options_.gateway_id);
          break;
        case Kind::Settle:
          db_->settle(op.hold.id, op.row);
          break;
        case Kind::Release:
          db_->dropHold(op.hold.id);
          break;
      }
    }
    tx.commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: the ledger could not commit %zu operations: %s\n", ops.size(),
                 e.what());
    const auto* store_error = dynamic_cast<const store::StoreError*>(&e);
    if (store_error == nullptr || store_error->kind() == store::StoreError::Kind::Unavailable) {
      db_.reset();  // Connect again for the next batch.
    }
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

void Ledger::commit(std::deque<Op>& batch) {
  // One order of team rows for every batch of every gateway: two gateways' transactions never
  // wait for each other's locks in a cycle.
  std::stable_sort(batch.begin(), batch.end(),
                   [](const Op& a, const Op& b) { return a.hold.team_id < b.hold.team_id; });
  std::vector<Op> ops(std::make_move_iterator(batch.begin()), std::make_move_iterator(batch.end()));
  std::vector<Reply> replies(ops.size());
  if (!apply(ops, replies) && ops.size() > 1 && db_) {
    // The store is there but refused one of them: each on its own, so that one request's
    // failure is not every other one's.
    for (std::size_t i = 0; i < ops.size() && db_; ++i) {
      apply(std::span(ops).subspan(i, 1), std::span(replies).subspan(i, 1));
    }
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (!replies[i].committed) {
      replies[i] = Reply{};
      if (ops[i].kind != Kind::Hold) {
        // Nothing was charged: the hold goes back once the store takes it.
        Op again;
        again.kind = Kind::Release;
        again.hold = ops[i].hold;
        retry_.push_back(std::move(again));
      }
    }
    complete(ops[i], replies[i]);
  }
}

void Ledger::maintain() {
  try {
    store::Transaction tx(store().connection());
    db_->reclaimHolds(kDeadAfterMs);
    tx.commit();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: reclaiming holds failed (will retry): %s\n", e.what());
    db_.reset();
  }
}

void Ledger::run() {
  auto last_reclaim = Clock::now();
  auto last_prune = Clock::now() - kPruneEvery;
  auto last_failure = Clock::time_point{};
  for (;;) {
    std::deque<Op> batch;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kReclaimEvery, [&] { return stop_ || !queue_.empty(); });
    }
    // Where the I/O threads share a CPU with this one, let them run first: they queue what their
    // ready connections hold, and one commit takes it all (else each commit would hold one).
    std::this_thread::yield();
    {
      std::lock_guard lock(mu_);
      batch.swap(queue_);
      stopping = stop_;
    }
    if (!retry_.empty() && (stopping || Clock::now() - last_failure >= kRetryAfterFailure)) {
      std::move(retry_.begin(), retry_.end(), std::back_inserter(batch));
      retry_.clear();
    }
    if (!batch.empty()) {
      commit(batch);
      if (!retry_.empty()) {
        last_failure = Clock::now();
      }
    }
    if (stopping) {
      std::lock_guard lock(mu_);
      if (queue_.empty()) {
        return;
      }
      continue;
    }
    if (Clock::now() - last_reclaim >= kReclaimEvery) {
      maintain();
      last_reclaim = Clock::now();
    }
    if (options_.retention_days > 0 && Clock::now() - last_prune >= kPruneEvery) {
      try {
        store().pruneSpend(store::nowMs() - options_.retention_days * kMsPerDay);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tollgate: pruning the spend log failed: %s\n", e.what());
        db_.reset();
      }
      last_prune = Clock::now();
    }
  }
}

}  // namespace tollgate::billing
