#include "limits/limiter.hpp"

#include <algorithm>
#include <limits>

#include "core/money.hpp"
#include "core/text.hpp"
#include "store/limits_store.hpp"
#include "store/writer.hpp"

namespace tollgate::limits {
namespace {

namespace asio = boost::asio;

constexpr std::int64_t kDeadAfterMs = Lease::kDeadAfter.count();
constexpr std::chrono::seconds kReclaimEvery{5};
/// Windows the store forgets: those that ended a minute ago.
constexpr std::int64_t kKeepWindowsMs = 2 * Limiter::kWindowMs;
constexpr std::int64_t kMsPerSecond = 1000;
constexpr std::int64_t kSecondsPerMinute = 60;
/// Without a store, counts beyond this many are swept of those that hold nothing.
constexpr std::size_t kMaxLocalCounts = 100'000;
/// Each gateway's share is at most a limit over this many per live gateway.
constexpr std::int64_t kSharesPerGateway = 4;

std::int64_t systemMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string_view scopeWord(ErrorKind refusal) {
  switch (refusal) {
    case ErrorKind::KeyRpmExceeded:
    case ErrorKind::KeyTpmExceeded:
    case ErrorKind::KeyConcurrencyExceeded:
      return "API key";
    case ErrorKind::TeamRpmExceeded:
    case ErrorKind::TeamTpmExceeded:
    case ErrorKind::TeamConcurrencyExceeded:
      return "team";
    default:
      return "model";
  }
}

/// The refusal for `a` in window `w`: why, in words a client can act on.
Error refusal(const Ask& a, bool never_fits, const Window& w) {
  const std::string scope(scopeWord(a.refusal));
  const std::string limit = std::to_string(a.limit);
  switch (a.kind) {
    case Kind::Spend: {
      const std::string budget = money::formatUsd(a.limit) + " USD";
      const std::string resets =
          w.ends != 0 ? "; it resets at " + text::utcTimestamp(w.ends) : " in all; it never resets";
      if (never_fits) {
        return Error{a.refusal,
                     "This request may cost up to " + money::formatUsd(a.amount) +
                         " USD, more than this API key's whole budget of " + budget +
                         "; lower max_tokens to fit" + resets + ".",
                     "max_tokens"};
      }
      return Error{a.refusal,
                   "This API key's budget of " + budget +
                       " is spent (or held by its requests in flight)" + resets + ".",
                   ""};
    }
    case Kind::Requests:
      return Error{a.refusal,
                   "Rate limit reached: the " + scope + "'s limit is " + limit +
                       " requests per minute. Retry after the time in Retry-After.",
                   ""};
    case Kind::Tokens:
      if (never_fits) {
        return Error{a.refusal,
                     "This request may use " + std::to_string(a.amount) +
                         " tokens, more than the " + scope + "'s limit of " + limit +
                         " tokens per minute; lower max_tokens (or the prompt) to fit.",
                     "max_tokens"};
      }
      return Error{a.refusal,
                   "Rate limit reached: the " + scope + "'s limit is " + limit +
                       " tokens per minute. Retry after the time in Retry-After.",
                   ""};
    case Kind::Concurrent:
      break;
  }
  return Error{a.refusal,
               "Too many requests in flight: the " + scope + "'s limit is " + limit +
                   " at once. Retry when one has ended.",
               ""};
}

}  // namespace

Taken::Taken(Taken&& other) noexcept
    : limiter_(std::exchange(other.limiter_, nullptr)), entries_(std::move(other.entries_)) {}

Taken& Taken::operator=(Taken&& other) noexcept {
  if (this != &other) {
    giveAllBack();
    limiter_ = std::exchange(other.limiter_, nullptr);
    entries_ = std::move(other.entries_);
  }
  return *this;
}

Taken::~Taken() {
  if (limiter_ == nullptr) {
    return;
  }
  for (const Entry& e : entries_) {
    if (e.kind == Kind::Concurrent) {
      limiter_->giveBack(e, e.amount);
    }
  }
}

void Taken::settle(std::int64_t tokens, std::int64_t cost) {
  if (limiter_ == nullptr) {
    return;
  }
  for (Entry& e : entries_) {
    if (e.kind == Kind::Tokens || e.kind == Kind::Spend) {
      const std::int64_t used = e.kind == Kind::Tokens ? tokens : cost;
      const std::int64_t unused = e.amount - std::clamp<std::int64_t>(used, 0, e.amount);
      limiter_->giveBack(e, unused);
      e.amount -= unused;
    }
  }
}

void Taken::giveAllBack() {
  if (limiter_ == nullptr) {
    return;
  }
  for (const Entry& e : entries_) {
    limiter_->giveBack(e, e.amount);
  }
  entries_.clear();
}

void Taken::merge(Taken other) {
  if (limiter_ == nullptr) {
    limiter_ = other.limiter_;
  }
  for (Entry& e : other.entries_) {
    entries_.push_back(std::move(e));
  }
  other.entries_.clear();
  other.limiter_ = nullptr;
}

Limiter::Limiter(store::Writer* writer, std::string gateway_id, const Lease* lease)
    : writer_(writer), gateway_id_(std::move(gateway_id)), lease_(lease) {
  if (writer_ != nullptr) {
    writer_->attach(*this, [this](store::Connection& c) {
      store::LimitsStore db(c);
      offset_ms_ = db.nowMs() - systemMs();
      live_ = std::max<std::int64_t>(1, db.liveGateways(kDeadAfterMs));
    });
  }
}

Limiter::~Limiter() {
  if (writer_ != nullptr) {
    writer_->detach(*this);
  }
}

std::int64_t Limiter::nowMs() const { return systemMs() + offset_ms_.load(); }

bool Limiter::takeLocally(const Ask& a, std::int64_t window) {
  std::lock_guard lock(mu_);
  if (local_.size() >= kMaxLocalCounts) {
    // Many sources in open mode: forget the counts that hold nothing now.
    std::erase_if(local_, [window](const auto& entry) {
      return entry.second.used == 0 || (entry.second.window != 0 && entry.second.window < window);
    });
  }
  Count& count = local_[a.id];
  if (count.window != window) {
    count = Count{window, 0};
  }
  if (count.used > a.limit - a.amount) {
    return false;
  }
  count.used += a.amount;
  return true;
}

asio::awaitable<Limiter::Granted> Limiter::grant(const Ask& a, const Window& w, std::int64_t need,
                                                 std::uint64_t epoch) {
  const std::int64_t share =
      std::max<std::int64_t>(1, a.limit / (kSharesPerGateway * live_.load()));
  // Whole requests' worth, so that no share keeps a fragment another request could have used.
  const std::int64_t whole = std::max<std::int64_t>(1, a.amount);
  const std::int64_t want = std::max(need, whole * std::max<std::int64_t>(1, share / whole));
  store::LimitGrant g;
  const bool committed = co_await writer_->run([&](store::Connection& c) {
    g = store::LimitsStore(c).grant(a.id, w.start, w.ends, need, want, a.limit, gateway_id_);
  });
  if (!committed) {
    co_return Granted::Unavailable;
  }
  offset_ms_ = g.now_ms - systemMs();
  std::lock_guard lock(mu_);
  const ShareBook::Grant granted{g.granted, g.granted > 0 ? need : 0, g.used, a.limit, w.ends};
  book_.granted(a.id, w.start, granted, epoch, Clock::now());
  co_return g.granted > 0 ? Granted::Yes : Granted::No;
}

std::int64_t Limiter::remaining(const Ask& a, std::int64_t window) {
  std::lock_guard lock(mu_);
  if (writer_ != nullptr) {
    return book_.remaining(a.id, window, a.limit);
  }
  const auto it = local_.find(a.id);
  const std::int64_t used = it != local_.end() && it->second.window == window ? it->second.used : 0;
  return std::clamp<std::int64_t>(a.limit - used, 0, a.limit);
}

asio::awaitable<Admission> Limiter::admit(const std::vector<Ask>& asks) {
  Admission out;
  const std::int64_t now = nowMs();
  const std::int64_t window = now - now % kWindowMs;
  const std::int64_t reset_ms = window + kWindowMs - now;
  // One reading of the steady clock for the whole admission: the lease's and the shares'.
  const Clock::time_point steady = Clock::now();
  const std::optional<std::uint64_t> trusted =
      lease_ != nullptr ? lease_->trusted(steady) : std::optional<std::uint64_t>(0);
  const std::uint64_t ep = lease_ != nullptr ? trusted.value_or(lease_->epoch()) : 0;
  std::vector<Taken::Entry> entries;
  entries.reserve(asks.size());
  for (const Ask& a : asks) {
    const Window win = a.window                     ? *a.window
                       : a.kind == Kind::Concurrent ? Window{}
                                                    : Window{window, window + kWindowMs};
    const std::int64_t w = win.start;
    Standing standing{a.kind, a.limit, 0, a.kind == Kind::Concurrent ? 0 : reset_ms};
    bool taken = false;
    bool known = false;  // `standing.remaining` already read.
    const bool never_fits = a.amount > a.limit;
    if (!never_fits && writer_ == nullptr) {
      taken = takeLocally(a, w);
    } else if (!never_fits) {
      std::int64_t at_hand = 0;
      {
        std::lock_guard lock(mu_);
        at_hand = book_.takeUpTo(a.id, w, a.amount, trusted, steady);
        if (at_hand == a.amount) {  // The usual case: from the share at hand, in one lock.
          standing.remaining = book_.remaining(a.id, w, a.limit);
          known = true;
        }
      }
      const Granted granted =
          at_hand == a.amount ? Granted::Yes : co_await grant(a, win, a.amount - at_hand, ep);
      taken = granted == Granted::Yes;
      if (!taken && at_hand > 0) {
        std::lock_guard lock(mu_);
        book_.give(a.id, w, at_hand, ep);
      }
      if (granted == Granted::Unavailable) {
        out.refused = Error{ErrorKind::LimitsUnavailable,
                            "The gateway cannot reach its store to count this request against "
                            "its rate limits; retry shortly.",
                            ""};
        out.retry_after = 1;
      }
    }
    if (!known) {
      standing.remaining = remaining(a, w);
    }
    out.standings.push_back(standing);
    if (out.refused) {
      break;
    }
    if (!taken) {
      out.refused = refusal(a, never_fits, win);
      if (!never_fits && a.kind != Kind::Spend) {
        out.retry_after =
            a.kind == Kind::Concurrent
                ? 1
                : std::max<std::int64_t>(1, (reset_ms + kMsPerSecond - 1) / kMsPerSecond);
      }
      break;
    }
    entries.push_back({a.id, a.kind, w, a.amount, ep});
  }
  out.taken = Taken(this, std::move(entries));
  if (out.refused) {
    out.taken.giveAllBack();
  }
  co_return out;
}

void Limiter::giveBack(const Taken::Entry& e, std::int64_t amount) {
  if (amount <= 0) {
    return;
  }
  std::lock_guard lock(mu_);
  if (writer_ != nullptr) {
    book_.give(e.id, e.window, amount, e.epoch);
    return;
  }
  const auto it = local_.find(e.id);
  if (it != local_.end() && it->second.window == e.window) {
    it->second.used -= std::min(amount, it->second.used);
  }
}

void Limiter::tick(bool closing) {
  const auto now = Clock::now();
  const std::int64_t store_now = nowMs();
  std::vector<ShareBook::Unused> unused;
  {
    std::lock_guard lock(mu_);
    unused = book_.takeIdle(now, kShareIdle, closing, store_now);
  }
  const bool reclaim = now - last_reclaim_ >= kReclaimEvery;
  if (unused.empty() && !reclaim) {
    return;
  }
  if (reclaim) {
    last_reclaim_ = now;
  }
  writer_->transact("the rate limits' shares could not be given back", [&](store::Connection& c) {
    store::LimitsStore db(c);
    for (const ShareBook::Unused& u : unused) {
      db.giveBack(u.limit_id, u.window, u.amount, gateway_id_);
    }
    if (reclaim) {
      db.reclaim(kDeadAfterMs, kKeepWindowsMs);
      live_ = std::max<std::int64_t>(1, db.liveGateways(kDeadAfterMs));
    }
  });
}

std::string resetText(std::int64_t ms) {
  const std::int64_t seconds = std::max<std::int64_t>(1, (ms + kMsPerSecond - 1) / kMsPerSecond);
  if (seconds < kSecondsPerMinute) {
    return std::to_string(seconds) + "s";
  }
  return std::to_string(seconds / kSecondsPerMinute) + "m" +
         std::to_string(seconds % kSecondsPerMinute) + "s";
}

std::vector<std::pair<std::string, std::string>> rateLimitHeaders(
    const std::vector<Standing>& standings, bool refused) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [kind, word] : {std::pair{Kind::Requests, std::string_view("requests")},
                                   std::pair{Kind::Tokens, std::string_view("tokens")}}) {
    const Standing* tightest = nullptr;
    for (const Standing& s : standings) {
      // remaining / limit < best.remaining / best.limit, without division.
      if (s.kind == kind &&
          (tightest == nullptr || static_cast<__int128>(s.remaining) * tightest->limit <
                                      static_cast<__int128>(tightest->remaining) * s.limit)) {
        tightest = &s;
      }
    }
    if (tightest == nullptr) {
      continue;
    }
    const std::string suffix(word);
    const bool zero = refused && kind == Kind::Requests;
    out.emplace_back("x-ratelimit-limit-" + suffix, std::to_string(tightest->limit));
    out.emplace_back("x-ratelimit-remaining-" + suffix,
                     zero ? "0" : std::to_string(tightest->remaining));
    out.emplace_back("x-ratelimit-reset-" + suffix, resetText(tightest->reset_ms));
  }
  return out;
}

}  // namespace tollgate::limits
