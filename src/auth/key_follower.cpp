#include "auth/key_follower.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "core/thread_name.hpp"

namespace tollgate::auth {
namespace {

constexpr std::chrono::milliseconds kRetryAfterFailure{1'000};
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
                         std::vector<std::string> key_roles, store::Liveness& liveness)
    : where_(std::move(where)),
      keys_(keys),
      gateway_id_(std::move(gateway_id)),
      key_roles_(std::move(key_roles)),
      liveness_(liveness) {
  db_ = std::make_unique<store::Store>(store::connect(where_));
  db_->connection().waitForChange(std::chrono::milliseconds(0));  // Start listening first.
  db_->registerGateway({gateway_id_, hostName(), ::getpid(), 0, -1});
  db_->forgetGatewaysUnseenFor(kForgetAfterMs);
  forgetDeadLocalGateways(*db_);
  reload();
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
    std::fprintf(stderr, "tollgate: could not unregister from the store: %s\n", e.what());
  }
}

void KeyFollower::reload() {
  // The sequence first: the keys read after it are at least that new, so the sequence recorded
  // as applied never claims a change the table does not hold.
  const std::int64_t seq = db_->changeSeq();
  const std::vector<store::KeyGrant> rows = db_->loadGrants(key_roles_);
  const std::shared_ptr<KeyTable> previous = keys_.latest();
  keys_.publish(std::make_shared<KeyTable>(rows, previous.get()));
  applied_ = seq;
  heartbeat();
}

void KeyFollower::heartbeat() {
  const auto started = Clock::now();
  db_->heartbeat(gateway_id_, applied_);
  liveness_.beat(started, Clock::now());
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
  db_ = std::make_unique<store::Store>(store::connect(where_));
  db_->connection().waitForChange(std::chrono::milliseconds(0));
  // A gateway that lost the store may have been forgotten; register again.
  db_->unregisterGateway(gateway_id_);
  db_->registerGateway({gateway_id_, hostName(), ::getpid(), 0, -1});
  applied_ = -1;
}

void KeyFollower::step(Clock::time_point& last_beat, Clock::time_point& last_flush) {
  if (!db_) {
    reconnect();
  }
  const auto beat_due = last_beat + kHeartbeat;
  db_->connection().waitForChange(
      std::max(std::chrono::duration_cast<std::chrono::milliseconds>(beat_due - Clock::now()),
               std::chrono::milliseconds(0)));
  // Writes only on a timer, never because something woke us: on SQLite every write of one
  // gateway wakes all the others, and answering with a write would make them ping-pong.
  if (db_->changeSeq() != applied_) {
    reload();  // Heartbeats too.
    last_beat = Clock::now();
  } else if (Clock::now() >= beat_due) {
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
      std::fprintf(stderr, "tollgate: following the store failed (will retry): %s\n", e.what());
      db_.reset();
      for (auto waited = std::chrono::milliseconds(0); waited < kRetryAfterFailure && !stop_;
           waited += std::chrono::milliseconds(50)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
}

}  // namespace tollgate::auth
