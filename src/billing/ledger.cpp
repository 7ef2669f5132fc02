#include "billing/ledger.hpp"

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <numeric>
#include <span>
#include <vector>

#include "store/reply.hpp"
#include "store/writer.hpp"

namespace tollgate::billing {
namespace {

namespace asio = boost::asio;

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
}  // namespace

Ledger::Ledger(store::Writer& writer, std::string gateway_id, const Lease& lease)
    : writer_(writer), gateway_id_(std::move(gateway_id)), lease_(lease) {
  // The key follower has registered this gateway and forgotten this host's dead ones: their
  // holds go back now.
  writer_.attach(*this, [](store::Connection& c) {
    store::Transaction tx(c);
    store::BillingStore(c).reclaimHolds(kDeadAfterMs);
    tx.commit();
  });
}

Ledger::~Ledger() {
  writer_.detach(*this);
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

asio::awaitable<Ledger::Reply> Ledger::submit(Op& op) {
  co_return co_await store::awaitReply<Reply>([this, &op](store::Waiter<Reply> waiter) {
    op.waiter = std::move(waiter);
    enqueue(std::move(op));
  });
}

asio::awaitable<Ledger::HoldReply> Ledger::hold(std::string team_id, money::Pico amount) {
  {
    const auto now = Clock::now();
    std::lock_guard lock(escrow_mu_);
    if (auto held = escrows_.take(team_id, amount, lease_.trusted(now), now)) {
      ++in_flight_.holds;
      in_flight_.amount += amount;
      co_return HoldReply{HoldStatus::Held, 0, std::move(*held)};
    }
  }
  Op op;
  op.kind = Kind::Hold;
  op.hold = {"", std::move(team_id), amount};
  const Reply r = co_await submit(op);
  if (!r.committed) {
    co_return HoldReply{HoldStatus::Unavailable, 0, {}};
  }
  const HoldStatus status = r.hold.held           ? HoldStatus::Held
                            : !r.hold.team_active ? HoldStatus::Suspended
                                                  : HoldStatus::Insufficient;
  co_return HoldReply{status, r.hold.available, r.hold.held ? r.granted : store::Hold{}};
}

asio::awaitable<bool> Ledger::settle(store::Hold h, store::SpendRow row, bool withholdable,
                                     std::optional<store::Settlement::Completion> idempotency,
                                     std::optional<store::Settlement::KeySpend> key_spend) {
  Op op;
  op.kind = Kind::Settle;
  op.hold = std::move(h);
  op.row = std::move(row);
  op.withholdable = withholdable;
  op.idempotency = std::move(idempotency);
  op.key_spend = key_spend;
  const Reply r = co_await submit(op);
  co_return r.committed&& r.settled != store::SettleOutcome::Withheld;
}

void Ledger::record(store::SpendRow row) {
  Op op;
  op.kind = Kind::Settle;
  op.hold = {"", row.team_id, 0};  // No hold: the store writes the row alone.
  op.row = std::move(row);
  enqueue(std::move(op));
}

void Ledger::release(const store::Hold& h) {
  std::lock_guard lock(escrow_mu_);
  escrows_.give(h.team_id, h.id, h.amount);
  --in_flight_.holds;
  in_flight_.amount -= h.amount;
}

Ledger::InFlight Ledger::inFlight() const {
  std::lock_guard lock(escrow_mu_);
  return in_flight_;
}

void Ledger::enqueue(Op&& op) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(op));
  }
  writer_.wake();
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

void Ledger::applyTeam(store::BillingStore& db, std::span<Op> ops, std::span<Reply> replies) {
  std::vector<store::Settlement> settling;
  std::vector<std::size_t> settled_at;
  settling.reserve(ops.size());  // No reallocation once a row has been lent.
  settled_at.reserve(ops.size());
  // The settlements' rows and claims are lent to the store, not copied, and given back whatever
  // happens, with the costs as they were: a batch that fails is tried again one by one.
  struct GiveBack {
    std::span<Op> ops;
    std::vector<store::Settlement>& settling;
    std::vector<std::size_t>& at;
    ~GiveBack() {
      for (std::size_t k = 0; k < settling.size(); ++k) {
        Op& op = ops[at[k]];
        const std::int64_t cost = op.row.cost;  // A move leaves numbers as they were.
        const std::int64_t uncollected = op.row.uncollected;
        op.row = std::move(settling[k].row);
        op.row.cost = cost;
        op.row.uncollected = uncollected;
        op.idempotency = std::move(settling[k].idempotency);
      }
    }
  } give_back{ops, settling, settled_at};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    Op& op = ops[i];
    if (op.kind == Kind::Hold) {
      replies[i].hold = db.hold({op.hold.id, op.hold.team_id, op.hold.amount - op.draw.lent},
                                gateway_id_, times(kEscrowRequests, op.hold.amount),
                                times(kEscrowPlentyRequests, op.hold.amount), op.draw.existing);
    } else {
      settled_at.push_back(i);
      settling.push_back({op.hold.id, std::move(op.row), op.withholdable, std::move(op.idempotency),
                          op.key_spend});
    }
  }
  if (settling.empty()) {
    return;
  }
  const std::vector<store::SettleOutcome> outcomes =
      db.settle(settling, balance_alerts_, key_alerts_ppm_);
  for (std::size_t k = 0; k < outcomes.size(); ++k) {
    Reply& r = replies[settled_at[k]];
    r.settled = outcomes[k];
    r.written = {settling[k].row.cost, settling[k].row.uncollected};
  }
}

bool Ledger::apply(std::span<Op> ops, std::span<Reply> replies) {
  const auto began = Clock::now();
  const bool committed = writer_.transact(
      "the ledger could not commit " + std::to_string(ops.size()) + " operations",
      [&](store::Connection& c) {
        store::BillingStore db(c);
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
  for (std::size_t i = 0; i < ops.size(); ++i) {
    Reply& r = replies[i];
    r.committed = true;
    if (ops[i].kind == Kind::Settle && r.settled != store::SettleOutcome::Withheld) {
      // The row as written, which nothing tries again now.
      ops[i].row.cost = r.written.cost;
      ops[i].row.uncollected = r.written.uncollected;
      if (listener_ != nullptr) {
        listener_->spent(ops[i].row);
      }
    }
  }
  if (listener_ != nullptr) {
    listener_->batch(ops.size(),
                     std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - began));
  }
  ++commits_;
  operations_ += static_cast<std::int64_t>(ops.size());
  largest_commit_ = std::max(largest_commit_, static_cast<std::int64_t>(ops.size()));
  return true;
}

void Ledger::account(const Op& op, const Reply& reply, std::uint64_t epoch) {
  if (op.hold.id.empty()) {
    return;  // No escrow involved: a row that charged nothing.
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
      ++in_flight_.holds;
      in_flight_.amount += op.hold.amount;
    } else {
      escrows_.refused(team, op.draw, epoch);
    }
  } else {
    if (reply.settled != store::SettleOutcome::Withheld) {
      // Settled: no longer in flight (a withheld one is released by its Charge).
      --in_flight_.holds;
      in_flight_.amount -= op.hold.amount;
    }
    if (reply.settled == store::SettleOutcome::Kept) {
      escrows_.settled(team, op.hold.id, op.hold.amount - op.row.cost, epoch);
    } else {
      escrows_.gone(team, op.hold.id);
    }
  }
}

bool Ledger::commit() {
  std::deque<Op> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(queue_);
  }
  if (batch.empty()) {
    return false;
  }
  // One order of team rows for every batch of every gateway: two gateways' transactions never
  // wait for each other's locks in a cycle. The order is sorted, not the operations (they are
  // large): each is moved once.
  std::vector<std::size_t> order(batch.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return batch[a].hold.team_id < batch[b].hold.team_id;
  });
  std::vector<Op> ops;
  ops.reserve(batch.size());
  for (const std::size_t i : order) {
    ops.push_back(std::move(batch[i]));
  }
  drawFromEscrows(ops);
  const std::uint64_t epoch = lease_.epoch();
  std::vector<Reply> replies(ops.size());
  if (!apply(ops, replies) && ops.size() > 1 && writer_.connected()) {
    // The store is there but refused one of them: each on its own, so that one request's
    // failure is not every other one's.
    for (std::size_t i = 0; i < ops.size() && writer_.connected(); ++i) {
      apply(std::span(ops).subspan(i, 1), std::span(replies).subspan(i, 1));
    }
  }
  std::deque<Op> again;
  store::Deliveries<Reply> replied;  // Resumed together, after every reply is known.
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
    replied.give(std::move(ops[i].waiter), std::move(r));
  }
  replied.send();
  if (!again.empty()) {
    {
      std::lock_guard lock(mu_);
      queue_.insert(queue_.begin(), std::make_move_iterator(again.begin()),
                    std::make_move_iterator(again.end()));
    }
    writer_.wake();
  }
  return true;
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
  const bool returned =
      writer_.transact("returning escrows failed (will retry)", [&](store::Connection& c) {
        store::BillingStore db(c);
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

void Ledger::tick(bool closing) {
  returnEscrows(closing);
  if (closing || Clock::now() - last_reclaim_ < kReclaimEvery) {
    return;
  }
  writer_.transact("reclaiming holds failed (will retry)",
                   [](store::Connection& c) { store::BillingStore(c).reclaimHolds(kDeadAfterMs); });
  last_reclaim_ = Clock::now();
}

}  // namespace tollgate::billing
