#include "accounts/sign_in_guard.hpp"

#include <algorithm>

namespace tollgate::accounts {

std::string describe(const SignInFailures& f) {
  std::string text =
      std::to_string(f.count) + (f.count == 1 ? " failed sign-in" : " failed sign-ins");
  for (std::size_t i = 0; i < f.busiest.size(); ++i) {
    text += i == 0 ? "; busiest sources: " : ", ";
    text += f.busiest[i].first + " (" + std::to_string(f.busiest[i].second) + ")";
  }
  return text;
}

std::chrono::seconds SignInGuard::throttledFor(std::string_view source, Clock::time_point now) {
  std::lock_guard lock(mu_);
  const auto it = windows_.find(std::string(source));
  if (it == windows_.end() || it->second.count < kThrottleAfter) {
    return std::chrono::seconds::zero();
  }
  const auto left = it->second.start + kWindow - now;
  if (left <= Clock::duration::zero()) {
    return std::chrono::seconds::zero();
  }
  // Rounded up: a client that waits what it is told is not refused again.
  return std::chrono::ceil<std::chrono::seconds>(left);
}

void SignInGuard::failed(std::string_view source, Clock::time_point now) {
  std::lock_guard lock(mu_);
  std::string key(source);
  auto it = windows_.find(key);
  if (it == windows_.end()) {
    makeRoom(now);
    it = windows_.emplace(key, Window{now, 0}).first;
  } else if (now - it->second.start >= kWindow) {
    it->second = Window{now, 0};
  }
  ++it->second.count;
  ++pending_;
  // The summary's sources are bounded as the windows are: past the bound only the total counts.
  if (pending_by_source_.size() < kMaxSources || pending_by_source_.contains(key)) {
    ++pending_by_source_[std::move(key)];
  }
}

void SignInGuard::succeeded(std::string_view source) {
  std::lock_guard lock(mu_);
  windows_.erase(std::string(source));
}

std::optional<SignInFailures> SignInGuard::takeSummary(Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (pending_ == 0 || (last_summary_ && now - *last_summary_ < kSummaryEvery)) {
    return std::nullopt;
  }
  SignInFailures f{pending_, {pending_by_source_.begin(), pending_by_source_.end()}};
  const std::size_t shown = std::min(f.busiest.size(), kBusiestShown);
  std::partial_sort(f.busiest.begin(), f.busiest.begin() + static_cast<std::ptrdiff_t>(shown),
                    f.busiest.end(), [](const auto& a, const auto& b) {
                      return a.second != b.second ? a.second > b.second : a.first < b.first;
                    });
  f.busiest.resize(shown);
  pending_ = 0;
  pending_by_source_.clear();
  last_summary_ = now;
  return f;
}

void SignInGuard::makeRoom(Clock::time_point now) {
  if (windows_.size() < kMaxSources) {
    return;
  }
  std::erase_if(windows_, [&](const auto& w) { return now - w.second.start >= kWindow; });
  if (windows_.size() < kMaxSources) {
    return;
  }
  windows_.erase(std::min_element(
      windows_.begin(), windows_.end(),
      [](const auto& a, const auto& b) { return a.second.count < b.second.count; }));
}

}  // namespace tollgate::accounts
