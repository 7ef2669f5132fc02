#include "auth/key_follower.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "core/log.hpp"
#include "core/thread_name.hpp"
#include "store/store.hpp"

namespace tollgate::auth {
namespace {

constexpr std::chrono::milliseconds kRetryAfterFailure{1'000};
/// Heartbeats per lease: a heartbeat or two may be slow or lost before the lease runs out.
constexpr int kBeatsPerLease = 4;
/// Rows of gateways unseen for this long are removed by whoever notices.
constexpr std::int64_t kForgetAfterMs = 3'600'000;

std::string hostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) {
    return "unknown";
  }
  return name;
}

/// Gateways registered from this host whose process is gone: they are dead now, not in an hour
/// (a gateway killed and restarted at once has its holds reclaimed at start).
void forgetDeadLocalGateways(store::Store& db) {
  for (const store::GatewayRecord& g : db.gatewaysOn(hostName())) {
    if (g.pid > 0 && ::kill(static_cast<pid_t>(g.pid), 0) != 0 && errno == ESRCH) {
      db.unregisterGateway(g.id);
    }
  }
}

}  // namespace

KeyFollower::KeyFollower(store::Location where, KeyDirectory& keys, std::string gateway_id,
                         std::vector<std::string> key_roles, Lease& lease)
    : where_(std::move(where)),
      keys_(keys),
      gateway_id_(std::move(gateway_id)),
      key_roles_(std::move(key_roles)),
      lease_(lease) {
  connect();
  registerGateway();
  db_->forgetGatewaysUnseenFor(kForgetAfterMs);
  forgetDeadLocalGateways(*db_);
  heartbeat();
  thread_ = std::thread([this] { run(); });
}

KeyFollower::~KeyFollower() {
  stop_ = true;
  thread_.join();
  try {
    if (!db_) {
      reconnect();
    }
    flush();
    db_->unregisterGateway(gateway_id_);
  } catch (const std::exception& e) {
    log::line(log::Level::Warn, std::string("could not unregister from the store: ") + e.what());
  }
}

void KeyFollower::connect() {
  db_ = std::make_unique<store::Store>(store::connect(where_));
  // A heartbeat need not reach the disk before it returns: a power cut that loses it stops this
  // gateway too. Waiting for the flush would hold the write lock, and the ledger's charges
  // behind it, for milliseconds twice a second.
  db_->connection().relaxDurability();
  db_->endTransactionsIdleFor(lease_.length());
  db_->connection().waitForChange(std::chrono::milliseconds(0));  // Start listening first.
}

void KeyFollower::registerGateway() {
  db_->registerGateway({gateway_id_, hostName(), ::getpid(), 0, applied_, lease_.length().count()});
}

void KeyFollower::heartbeat() {
  const auto started = Clock::now();
  store::Transaction tx(db_->connection());
  // Read so that a change commits before this heartbeat or is seen by it: a heartbeat that
  // renews the lease never leaves the table behind a change that has returned.
  const std::int64_t seq = db_->lockedChangeSeq();
  if (seq != applied_) {
    const std::vector<store::KeyGrant> rows = db_->loadGrants(key_roles_);
    const std::shared_ptr<KeyTable> previous = keys_.latest();
    // Published before the commit that says so: once the store records the sequence applied,
    // the table serves it.
    keys_.publish(std::make_shared<KeyTable>(rows, previous.get()));
    applied_ = seq;
  }
  if (!db_->heartbeat(gateway_id_, applied_)) {
    registerGateway();  // Forgotten while it was away.
  }
  tx.commit();
  lease_.renew(started, Clock::now());
}

void KeyFollower::flush() {
  if (const std::shared_ptr<KeyTable> table = keys_.latest()) {
    const auto used = table->takeUsed();
    if (!used.empty()) {
      db_->touchKeys(used);
    }
  }
}

void KeyFollower::reconnect() {
  db_.reset();
  connect();
  applied_ = -1;  // Changes may have been missed: the next heartbeat reloads the table.
}

void KeyFollower::step(Clock::time_point& last_beat, Clock::time_point& last_flush) {
  if (!db_) {
    reconnect();
  }
  const auto beat_due = last_beat + lease_.length() / kBeatsPerLease;
  db_->connection().waitForChange(
      std::max(std::chrono::duration_cast<std::chrono::milliseconds>(beat_due - Clock::now()),
               std::chrono::milliseconds(0)));
  // Writes when the sequence moved or a heartbeat is due, never merely because something woke
  // us: on SQLite every write of one gateway wakes all the others, and answering each with a
  // write would make them ping-pong.
  if (db_->changeSeq() != applied_ || Clock::now() >= beat_due) {
    heartbeat();
    last_beat = Clock::now();
  }
  if (Clock::now() - last_flush >= kFlushEvery) {
    flush();
    last_flush = Clock::now();
  }
}

void KeyFollower::run() {
  nameThisThread("tg-keys");
  auto last_beat = Clock::now();
  auto last_flush = Clock::now();
  while (!stop_) {
    try {
      step(last_beat, last_flush);
    } catch (const std::exception& e) {
      // The table in use stays valid; changes wait until the store is back.
      log::line(log::Level::Warn,
                std::string("following the store failed (will retry): ") + e.what());
      db_.reset();
      // Fenced meanwhile once the lease runs out; back as soon as a heartbeat commits again.
      const auto retry_after =
          std::min<std::chrono::milliseconds>(kRetryAfterFailure, lease_.length() / kBeatsPerLease);
      for (auto waited = std::chrono::milliseconds(0); waited < retry_after && !stop_;
           waited += std::chrono::milliseconds(50)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
}

}  // namespace tollgate::auth
