#include "limits/share_book.hpp"

#include <algorithm>

namespace tollgate::limits {

bool ShareBook::take(const std::string& id, std::int64_t window, std::int64_t amount,
                     std::optional<std::uint64_t> epoch, Clock::time_point now) {
  const auto it = shares_.find(id);
  if (it == shares_.end()) {
    return false;
  }
  Share& s = it->second;
  if (s.window != window) {
    s = Share{window, 0, 0, s.epoch, now};  // Its window passed: what it held is worth nothing.
    return false;
  }
  if (window == 0 && epoch != s.epoch) {
    s.free = 0;  // Its slots may have been given back for it.
    return false;
  }
  if (s.free < amount) {
    return false;
  }
  s.free -= amount;
  s.touched = now;
  return true;
}

void ShareBook::granted(const std::string& id, std::int64_t window, std::int64_t granted,
                        std::int64_t taken, std::int64_t used, std::int64_t limit,
                        std::uint64_t epoch, Clock::time_point now) {
  Share& s = shares_[id];
  if (s.window != window || (window == 0 && epoch != s.epoch)) {
    s = Share{window, 0, 0, epoch, now};
  }
  s.free += granted - taken;
  s.used = std::min(used, limit);
  s.epoch = epoch;
  s.touched = now;
}

bool ShareBook::give(const std::string& id, std::int64_t window, std::int64_t amount,
                     std::uint64_t epoch) {
  const auto it = shares_.find(id);
  if (it == shares_.end() || it->second.window != window ||
      (window == 0 && it->second.epoch != epoch)) {
    return false;
  }
  it->second.free += amount;
  return true;
}

std::int64_t ShareBook::remaining(const std::string& id, std::int64_t window,
                                  std::int64_t limit) const {
  const auto it = shares_.find(id);
  if (it == shares_.end() || it->second.window != window) {
    return limit;
  }
  return std::clamp<std::int64_t>(limit - it->second.used + it->second.free, 0, limit);
}

std::vector<ShareBook::Unused> ShareBook::takeIdle(Clock::time_point now, Clock::duration idle,
                                                   bool all, std::int64_t oldest) {
  std::vector<Unused> out;
  for (auto it = shares_.begin(); it != shares_.end();) {
    Share& s = it->second;
    if (s.window != 0 && s.window < oldest) {
      it = shares_.erase(it);  // Its window passed: the store forgets it too.
      continue;
    }
    if (s.free > 0 && (all || now - s.touched >= idle)) {
      out.push_back({it->first, s.window, s.free});
      s.free = 0;
    }
    ++it;
  }
  return out;
}

}  // namespace tollgate::limits
