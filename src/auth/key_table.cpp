#include "auth/key_table.hpp"

namespace tollgate::auth {

KeyTable::KeyTable(const std::vector<store::KeyGrant>& rows, const KeyTable* previous) {
  grants_.reserve(rows.size());
  for (const store::KeyGrant& r : rows) {
    auto [it, fresh] = grants_.try_emplace(r.public_id);
    Grant& g = it->second;
    if (!fromHex(r.secret_hash, g.secret_hash)) {
      grants_.erase(it);  // Not a hash this gateway wrote: the key cannot match.
      continue;
    }
    g.team_id = r.team_id;
    g.team = r.team;
    g.revoked = r.revoked;
    g.team_active = r.team_active;
    g.creator_may_create = r.creator_may_create;
    g.team_allows_dryrun = r.team_allows_dryrun;
    g.creator_id = r.creator_id;
    g.expires_at = r.rules.expires_at;
    g.limits = r.rules.limits;
    g.team_limits = r.team_limits;
    g.budget = r.rules.budget;
    if (r.rules.allowed_models) {
      g.allowed_models = std::make_shared<const std::vector<std::string>>(*r.rules.allowed_models);
    }
    if (const Grant* old = previous != nullptr ? previous->find(r.public_id) : nullptr) {
      g.last_used_ms.store(old->last_used_ms.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
      g.flushed_ms = old->flushed_ms;
    }
  }
}

const Grant* KeyTable::find(std::string_view public_id) const {
  const auto it = grants_.find(public_id);
  return it == grants_.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, std::int64_t>> KeyTable::takeUsed() {
  std::vector<std::pair<std::string, std::int64_t>> out;
  for (auto& [public_id, g] : grants_) {
    const std::int64_t used = g.last_used_ms.load(std::memory_order_relaxed);
    if (used > g.flushed_ms) {
      out.emplace_back(public_id, used);
      g.flushed_ms = used;
    }
  }
  return out;
}

const KeyTable* KeyDirectory::current() const {
  // One cache per thread: the shared_ptr keeps the table alive while this thread may use it.
  thread_local std::uint64_t seen = 0;
  thread_local std::shared_ptr<KeyTable> table;
  if (version_.load(std::memory_order_acquire) != seen) {
    const std::lock_guard lock(mutex_);
    table = table_;
    seen = version_.load(std::memory_order_relaxed);
  }
  return table.get();
}

void KeyDirectory::publish(std::shared_ptr<KeyTable> table) {
  // Versions are unique in the process, so a thread's cache can never mistake one directory's
  // table for another's, even when a new directory reuses a destroyed one's address.
  static std::atomic<std::uint64_t> last_version{0};
  const std::lock_guard lock(mutex_);
  table_ = std::move(table);
  version_.store(last_version.fetch_add(1, std::memory_order_relaxed) + 1,
                 std::memory_order_release);
}

std::shared_ptr<KeyTable> KeyDirectory::latest() const {
  const std::lock_guard lock(mutex_);
  return table_;
}

}  // namespace tollgate::auth
