#include "routing/backoff.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>

namespace tollgate::routing {
namespace {

/// Whole seconds of delay-seconds: digits only, saturated at a day (longer is as good as never).
std::optional<Millis> delaySeconds(std::string_view v) {
  constexpr std::int64_t kDay = 24 * 3600;
  if (v.empty() || v.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  std::int64_t seconds = 0;
  for (const char c : v) {
    seconds = std::min(kDay, seconds * 10 + (c - '0'));
  }
  return Millis(seconds * 1000);
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` as seconds since the epoch.
std::optional<std::time_t> imfFixdate(std::string_view v) {
  constexpr std::string_view kSample = "Sun, 06 Nov 1994 08:49:37 GMT";
  if (v.size() != kSample.size() || v.substr(3, 2) != ", " || v.substr(v.size() - 4) != " GMT") {
    return std::nullopt;
  }
  const auto number = [&](std::size_t at, std::size_t len) -> std::optional<int> {
    int out = 0;
    const auto [end, ec] = std::from_chars(v.data() + at, v.data() + at + len, out);
    return ec == std::errc() && end == v.data() + at + len ? std::optional(out) : std::nullopt;
  };
  constexpr std::array<std::string_view, 12> kMonths{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto* month = std::find(kMonths.begin(), kMonths.end(), v.substr(8, 3));
  const auto day = number(5, 2);
  const auto year = number(12, 4);
  const auto hour = number(17, 2);
  const auto minute = number(20, 2);
  const auto second = number(23, 2);
  if (month == kMonths.end() || !day || !year || !hour || !minute || !second || v[7] != ' ' ||
      v[11] != ' ' || v[16] != ' ' || v[19] != ':' || v[22] != ':') {
    return std::nullopt;
  }
  std::tm tm{};
  tm.tm_year = *year - 1900;
  tm.tm_mon = static_cast<int>(month - kMonths.begin());
  tm.tm_mday = *day;
  tm.tm_hour = *hour;
  tm.tm_min = *minute;
  tm.tm_sec = *second;
  if (*day < 1 || *day > 31 || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  return timegm(&tm);
}

}  // namespace

Millis backoff(int retry, Millis max_delay, double unit) {
  constexpr int kMaxDoublings = 30;
  const auto ceiling =
      std::min(max_delay, Millis(kBackoffBase.count() << std::clamp(retry, 0, kMaxDoublings)));
  return Millis(
      static_cast<std::int64_t>(static_cast<double>(ceiling.count()) * std::clamp(unit, 0.0, 1.0)));
}

std::optional<Millis> parseRetryAfter(std::string_view value,
                                      std::chrono::system_clock::time_point now) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) {
    value.remove_prefix(1);
  }
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) {
    value.remove_suffix(1);
  }
  if (auto seconds = delaySeconds(value)) {
    return seconds;
  }
  const auto when = imfFixdate(value);
  if (!when) {
    return std::nullopt;
  }
  // In whole seconds: a date centuries ahead does not fit the clock's nanoseconds.
  constexpr std::time_t kDay = 24 * 3600;
  const std::time_t now_s = std::chrono::system_clock::to_time_t(now);
  return *when <= now_s ? Millis(0) : Millis(std::min(*when - now_s, kDay) * 1000);
}

std::optional<Millis> retryDelay(int retry, Millis max_delay, std::optional<Millis> retry_after,
                                 double unit) {
  if (retry_after && *retry_after > max_delay) {
    return std::nullopt;
  }
  return std::max(backoff(retry, max_delay, unit), retry_after.value_or(Millis(0)));
}

}  // namespace tollgate::routing
