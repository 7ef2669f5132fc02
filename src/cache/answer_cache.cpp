#include "cache/answer_cache.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>

namespace tollgate::cache {
namespace {

/// What a front entry costs beyond its body and key: the node, the index's slot, the strings.
constexpr std::int64_t kEntryOverhead = 256;
/// One answer takes at most this share of the front, so that a few large ones cannot empty it.
constexpr std::int64_t kLargestShare = 8;

std::string idOf(const std::string& team_id, const std::string& key) {
  return team_id + '\n' + key;
}

std::int64_t costOf(const store::CacheEntry& e) {
  return static_cast<std::int64_t>(e.body.size() + e.key.size() + e.team_id.size() +
                                   e.endpoint.size()) +
         kEntryOverhead;
}

}  // namespace

AnswerCache::AnswerCache(Options options, store::StoreWork* store)
    : options_(options), store_(store) {}

std::int64_t AnswerCache::memoryBytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

std::optional<store::CacheEntry> AnswerCache::recall(const std::string& id,
                                                     std::int64_t not_before) {
  std::lock_guard lock(mu_);
  const auto it = index_.find(id);
  if (it == index_.end() || it->second->entry.created_at < not_before) {
    return std::nullopt;
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->entry;
}

void AnswerCache::remember(store::CacheEntry entry) {
  const std::int64_t bytes = costOf(entry);
  if (bytes > options_.memory_bytes / kLargestShare) {
    return;  // Kept in the store only.
  }
  std::string id = idOf(entry.team_id, entry.key);
  std::lock_guard lock(mu_);
  if (const auto it = index_.find(id); it != index_.end()) {
    if (it->second->entry.created_at > entry.created_at) {
      return;  // A newer answer is already there.
    }
    bytes_ -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  while (!lru_.empty() && bytes_ + bytes > options_.memory_bytes) {
    bytes_ -= lru_.back().bytes;
    index_.erase(lru_.back().id);
    lru_.pop_back();
  }
  lru_.push_front(Node{id, std::move(entry), bytes});
  index_.emplace(std::move(id), lru_.begin());
  bytes_ += bytes;
}

boost::asio::awaitable<std::vector<std::optional<store::CacheEntry>>> AnswerCache::find(
    std::string team_id, std::vector<std::string> keys, std::int64_t not_before) {
  if (options_.retention_ms > 0) {
    not_before = std::max(not_before, store::nowMs() - options_.retention_ms);
  }
  std::vector<std::optional<store::CacheEntry>> found(keys.size());
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    found[i] = recall(idOf(team_id, keys[i]), not_before);
    if (!found[i]) {
      missing.push_back(i);
    }
  }
  if (missing.empty() || store_ == nullptr) {
    co_return found;
  }
  auto read = std::make_shared<std::vector<std::optional<store::CacheEntry>>>(missing.size());
  store::StoreWork::Task task = [read, &team_id, &keys, &missing,
                                 not_before](store::Connection& c) {
    store::CacheStore db(c);
    for (std::size_t k = 0; k < missing.size(); ++k) {
      (*read)[k] = db.findCacheEntry(team_id, keys[missing[k]], not_before);
    }
  };
  if (!co_await store_->run(std::move(task))) {
    co_return found;  // The store failed: a miss, and the upstream answers.
  }
  for (std::size_t k = 0; k < missing.size(); ++k) {
    if ((*read)[k]) {
      remember(*(*read)[k]);
      found[missing[k]] = std::move((*read)[k]);
    }
  }
  co_return found;
}

void AnswerCache::put(store::CacheEntry entry) {
  remember(entry);
  if (store_ == nullptr) {
    return;
  }
  {
    std::lock_guard lock(mu_);
    const auto bytes = static_cast<std::int64_t>(entry.body.size());
    // Answers come faster than the store takes them: the newest are not kept there.
    if (pending_bytes_ + bytes > std::max<std::int64_t>(options_.memory_bytes, bytes)) {
      return;
    }
    pending_bytes_ += bytes;
    pending_.push_back(std::move(entry));
    if (flush_posted_) {
      return;
    }
    flush_posted_ = true;
  }
  flush();
}

void AnswerCache::flush() {
  store_->post([this](store::Connection& c) {
    std::vector<store::CacheEntry> entries;
    {
      std::lock_guard lock(mu_);
      entries.swap(pending_);
      pending_bytes_ = 0;
      flush_posted_ = false;
    }
    store::CacheStore(c).putCacheEntries(entries, options_.team_max_bytes);
  });
}

}  // namespace tollgate::cache
