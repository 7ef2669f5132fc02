#include "store/writer.hpp"

#include <exception>
#include <future>
#include <span>
#include <string>
#include <vector>

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "store/alert_store.hpp"
#include "store/billing_store.hpp"
#include "store/cache_store.hpp"
#include "store/console_store.hpp"
#include "store/idempotency_store.hpp"
#include "store/reply.hpp"

namespace tollgate::store {
namespace {

namespace asio = boost::asio;

/// The longest the writer sleeps: its journals' upkeep runs about this often.
constexpr std::chrono::seconds kTick{1};
constexpr std::chrono::hours kPruneEvery{1};
/// Posted tasks run this many to a transaction at most, so that a charge queued meanwhile waits
/// for little.
constexpr std::size_t kPostedPerCommit = 32;

}  // namespace

Writer::Writer(Location where, Retention retention, WriterPacing pacing)
    : where_(std::move(where)), retention_(retention), pacing_(pacing) {
  connection();
  thread_ = std::thread([this] { loop(); });
  checkpointer_ = checkpointerFor(
      where_, [this] { call([this] { connection().checkpoint(); }); }, pacing_.longest_log_bytes);
}

Writer::~Writer() {
  checkpointer_.reset();  // First: it may be waiting for this thread to run its checkpoint.
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

Connection& Writer::connection() {
  if (!c_) {
    c_ = connect(where_);
    c_->relaxDurability();
  }
  return *c_;
}

asio::awaitable<bool> Writer::run(Task task) {
  co_return co_await awaitReply<bool>([this, &task](Waiter<bool> waiter) {
    {
      std::lock_guard lock(mu_);
      awaited_.push_back({std::move(task), std::move(waiter)});
    }
    wake_.notify_one();
  });
}

void Writer::post(Task task) {
  {
    std::lock_guard lock(mu_);
    posted_.push_back(std::move(task));
  }
  wake_.notify_one();
}

void Writer::wake() {
  {
    std::lock_guard lock(mu_);
    woken_ = true;
  }
  wake_.notify_one();
}

void Writer::call(std::function<void()> fn) {
  std::packaged_task<void()> job(std::move(fn));
  std::future<void> done = job.get_future();
  {
    std::lock_guard lock(mu_);
    calls_.emplace_back([&job] { job(); });
  }
  wake_.notify_one();
  done.get();
}

void Writer::attach(Journal& journal, const std::function<void(Connection&)>& open) {
  call([&] {
    open(connection());
    journals_.push_back(&journal);
  });
}

void Writer::detach(Journal& journal) {
  call([&] {
    while (journal.commit()) {
    }
    journal.tick(true);
    std::erase(journals_, &journal);
  });
}

bool Writer::transact(std::string_view failing, const std::function<void(Connection&)>& body) {
  try {
    Connection& c = connection();
    Transaction tx(c);
    body(c);
    tx.commit();
    return true;
  } catch (const std::exception& e) {
    log::line(log::Level::Error, std::string(failing) + ": " + e.what());
    const auto* store_error = dynamic_cast<const StoreError*>(&e);
    if (store_error == nullptr || store_error->kind() == StoreError::Kind::Unavailable) {
      c_.reset();  // Connect again next time.
    }
    return false;
  }
}

void Writer::runAwaited(std::vector<Awaited>& awaited) {
  if (awaited.empty()) {
    return;
  }
  const auto runAll = [](std::span<const Awaited> tasks) {
    return [tasks](Connection& c) {
      for (const Awaited& a : tasks) {
        a.task(c);
      }
    };
  };
  const std::span<const Awaited> all(awaited);
  Deliveries<bool> replied;
  if (transact("the store's writer could not commit " + std::to_string(all.size()) + " tasks",
               runAll(all))) {
    for (Awaited& a : awaited) {
      replied.give(std::move(a.waiter), true);
    }
    return;
  }
  // The store is there but refused one of them: each on its own, so that one request's failure
  // is not every other one's.
  for (std::size_t i = 0; i < all.size(); ++i) {
    const bool committed =
        all.size() > 1 && connected() &&
        transact("a task of the store's writer failed", runAll(all.subspan(i, 1)));
    replied.give(std::move(awaited[i].waiter), committed);
  }
}

void Writer::runPosted() {
  for (;;) {
    std::vector<Task> tasks;
    {
      std::lock_guard lock(mu_);
      if (urgentLocked()) {
        return;  // Charges, what is awaited and calls first.
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
             [&](Connection& c) {
               for (const Task& task : tasks) {
                 task(c);
               }
             });
  }
}

void Writer::prune() {
  const std::int64_t now = nowMs();
  transact("pruning old rows failed (will retry)", [&](Connection& c) {
    if (retention_.spend_days > 0) {
      BillingStore(c).pruneSpend(now - retention_.spend_days * kMsPerDay);
    }
    if (retention_.audit_days > 0) {
      ConsoleStore(c).pruneAudit(now - retention_.audit_days * kMsPerDay);
    }
    if (retention_.cache_ms > 0) {
      CacheStore(c).pruneCache(now - retention_.cache_ms);
    }
    if (retention_.idempotency_ms > 0) {
      IdempotencyStore(c).pruneIdempotencyKeys(now - retention_.idempotency_ms);
    }
    if (retention_.alert_days > 0) {
      AlertStore(c).pruneAlerts(now - retention_.alert_days * kMsPerDay);
    }
  });
}

void Writer::loop() {
  nameThisThread("tg-writer");
  auto last_prune = Clock::now() - kPruneEvery;
  auto round_began = Clock::now() - pacing_.round_spacing;
  for (;;) {
    std::deque<std::function<void()>> calls;
    std::vector<Awaited> awaited;
    bool stopping = false;
    {
      std::unique_lock lock(mu_);
      wake_.wait_for(lock, kTick, [&] { return stop_ || urgentLocked() || !posted_.empty(); });
    }
    if (const auto due = round_began + pacing_.round_spacing; Clock::now() < due) {
      std::this_thread::sleep_until(due);  // What is queued meanwhile joins this round.
    } else {
      // Where the I/O threads share a CPU with this one, let them run first: they queue what
      // their ready connections hold, and one commit takes it all.
      std::this_thread::yield();
    }
    round_began = Clock::now();
    {
      std::lock_guard lock(mu_);
      woken_ = false;
      calls.swap(calls_);
      awaited.swap(awaited_);
      stopping = stop_;
    }
    for (Journal* journal : journals_) {
      journal->commit();
    }
    runAwaited(awaited);
    for (const auto& fn : calls) {
      fn();
    }
    runPosted();
    if (stopping) {
      std::lock_guard lock(mu_);
      if (!urgentLocked() && posted_.empty()) {
        break;
      }
      continue;
    }
    for (Journal* journal : journals_) {
      journal->tick(false);
    }
    if (Clock::now() - last_prune >= kPruneEvery) {
      prune();
      last_prune = Clock::now();
    }
  }
}

}  // namespace tollgate::store
