#include "store/checkpointer.hpp"

#include <chrono>

#include "core/log.hpp"
#include "core/thread_name.hpp"

namespace tollgate::store {
namespace {

constexpr std::chrono::milliseconds kCheckpointEvery{200};

}  // namespace

Checkpointer::Checkpointer(Location where) : where_(std::move(where)), thread_([this] { run(); }) {}

Checkpointer::~Checkpointer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  stopped_.notify_one();
  thread_.join();
}

void Checkpointer::run() {
  nameThisThread("tg-checkpoint");
  std::unique_ptr<Connection> c;
  std::unique_lock lock(mu_);
  while (!stopped_.wait_for(lock, kCheckpointEvery, [&] { return stop_; })) {
    lock.unlock();
    try {
      if (!c) {
        c = connect(where_);
      }
      c->checkpoint();
    } catch (const std::exception& e) {
      log::line(log::Level::Warn,
                std::string("checkpointing the store failed (will retry): ") + e.what());
      c.reset();
    }
    lock.lock();
  }
}

std::unique_ptr<Checkpointer> checkpointerFor(const Location& where) {
  return where.engine == Engine::Sqlite ? std::make_unique<Checkpointer>(where) : nullptr;
}

}  // namespace tollgate::store
