#include "limits/share_book.hpp"

#include <algorithm>

namespace tollgate::limits {

std::int64_t ShareBook::takeUpTo(const std::string& id, std::int64_t window, std::int64_t amount,
                                 std::optional<std::uint64_t> epoch, Clock::time_point now) {
  const auto it = shares_.find(id);
  if (it == shares_.end()) {
    return 0;
  }
  Share& s = it->second;
  if (s.window != window) {
    s = Share{window, 0, 0, s.epoch, now, 0};  // Its window passed: what it held is worth nothing.
    return 0;
  }
  if (window == 0 && epoch != s.epoch) {
    s.free = 0;  // Its slots may have been given back for it.
    return 0;
  }
  const std::int64_t taken = std::min(s.free, amount);
  s.free -= taken;
  s.touched = now;
  return taken;
}

void ShareBook::granted(const std::string& id, std::int64_t window, const Grant& g,
                        std::uint64_t epoch, Clock::time_point now) {
  Share& s = shares_[id];
  if (s.window != window || (window == 0 && epoch != s.epoch)) {
    s = Share{window, 0, 0, epoch, now, g.ends};
  }
  s.free += g.granted - g.taken;
  s.used = std::min(g.used, g.limit);
  s.epoch = epoch;
  s.touched = now;
  s.ends = g.ends;
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
                                                   bool all, std::int64_t now_ms) {
  std::vector<Unused> out;
  for (auto it = shares_.begin(); it != shares_.end();) {
    Share& s = it->second;
    if (s.ends != 0 && s.ends <= now_ms) {
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
