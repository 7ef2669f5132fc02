#include "net/access_log.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <utility>

#include "core/json.hpp"
#include "core/money.hpp"
#include "core/text.hpp"
#include "core/trace_context.hpp"

namespace tollgate::net {
namespace {

/// The longest member name a line may have.
constexpr std::size_t kMaxKeyBytes = 40;

/// A member's name: one of our string literals, its length checked when compiled, so that the
/// room asked for a member always holds its name.
struct Key {
  template <std::size_t N>
  consteval Key(const char (&literal)[N])  // NOLINT(google-explicit-constructor): literals only.
      : text(literal, N - 1) {
    static_assert(N - 1 <= kMaxKeyBytes, "an access log key is longer than kMaxKeyBytes");
  }
  std::string_view text;
};

/// The end of the pending text, written through a pointer: each piece asks for the most room
/// it can take, and the text grows only when that is more than is left. Appending each piece to
/// the string cost a capacity check and a length update per piece, most of the line's cost.
class Cursor {
 public:
  explicit Cursor(std::string& out) : out_(out), used_(out.size()) { grow(0); }
  ~Cursor() { out_.resize(used_); }
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  /// Where the next `n` bytes (at most) go; done() says where they ended.
  char* room(std::size_t n) {
    if (out_.size() - used_ < n) {
      grow(n);
    }
    return out_.data() + used_;
  }
  void done(const char* end) { used_ = static_cast<std::size_t>(end - out_.data()); }
  void put(char c) {
    char* p = room(1);
    *p = c;
    done(p + 1);
  }

 private:
  static constexpr std::size_t kLineRoom = 1024;  ///< A usual line's length, and more.

  /// Room for `n` bytes past the text, and a usual line at least: zeroed (std::string has no
  /// other way to grow), so no more than that.
  void grow(std::size_t n) { out_.resize(used_ + std::max(n, kLineRoom)); }

  std::string& out_;
  std::size_t used_;  ///< The text's length; past it, room not yet written.
};

/// One JSON object written straight into the pending text. Its keys are ours, plain ASCII,
/// copied as they are; its string values are quoted. A json::Writer spent a third of the line's
/// cost on keeping its own structure.
class Line {
 public:
  explicit Line(Cursor& out) : out_(out) { close('{'); }
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  void text(Key key, std::string_view value) {
    char* p = name(key, out_.room(kMaxNameBytes + json::maxQuotedSize(value.size())));
    out_.done(json::writeQuoted(value, p));
  }
  void number(Key key, std::int64_t value) {
    char* p = name(key, out_.room(kMaxNameBytes + kMaxNumberBytes));
    out_.done(std::to_chars(p, p + kMaxNumberBytes, value).ptr);
  }
  /// A value already written as JSON: a number's exact text, or a nested object's.
  void raw(Key key, std::string_view json) {
    char* p = name(key, out_.room(kMaxNameBytes + json.size()));
    out_.done(std::copy(json.begin(), json.end(), p));
  }
  void millis(Key key, std::chrono::microseconds d) {
    out_.done(text::writeMillis(d, name(key, out_.room(kMaxNameBytes + text::kMaxMillisBytes))));
  }
  /// Opens an array under `key`: its elements are written with cursor(), and close(']') ends it.
  void array(Key key) {
    char* p = name(key, out_.room(kMaxNameBytes + 1));
    *p++ = '[';
    out_.done(p);
  }
  Cursor& cursor() { return out_; }
  void close(char c) { out_.put(c); }

 private:
  /// A member's name, with a comma, its quotes and a colon.
  static constexpr std::size_t kMaxNameBytes = kMaxKeyBytes + 4;
  static constexpr std::size_t kMaxNumberBytes = 20;  // An int64, its sign included.

  /// Writes `"key":`, after a comma but for the first member, at `p`; returns its end.
  char* name(Key key, char* p) {
    if (!first_) {
      *p++ = ',';
    }
    first_ = false;
    *p++ = '"';
    p = std::copy(key.text.begin(), key.text.end(), p);
    *p++ = '"';
    *p++ = ':';
    return p;
  }

  Cursor& out_;
  bool first_ = true;
};

std::string_view cacheName(exchange::CacheOutcome c) {
  switch (c) {
    case exchange::CacheOutcome::Hit:
      return "hit";
    case exchange::CacheOutcome::Miss:
      return "miss";
    case exchange::CacheOutcome::Partial:
      return "partial";
    case exchange::CacheOutcome::None:
      break;
  }
  return "off";
}

std::string_view keyName(exchange::KeyOutcome k) {
  switch (k) {
    case exchange::KeyOutcome::Claimed:
      return "claimed";
    case exchange::KeyOutcome::Replayed:
      return "replayed";
    case exchange::KeyOutcome::NotKept:
      return "not_kept";
    case exchange::KeyOutcome::Conflict:
      return "conflict";
    case exchange::KeyOutcome::None:
      break;
  }
  return "";
}

/// The token kinds beyond the two totals, those that are not zero.
void tokenKinds(Line& line, const exchange::TokenUsage& u) {
  struct Kind {
    Key name;
    std::int64_t count;
  };
  const Kind kinds[] = {{"cached_tokens", u.cached_tokens},
                        {"cache_write_tokens", u.cache_write_tokens},
                        {"cache_write_1h_tokens", u.cache_write_1h_tokens},
                        {"audio_prompt_tokens", u.audio_prompt_tokens},
                        {"reasoning_tokens", u.reasoning_tokens},
                        {"audio_completion_tokens", u.audio_completion_tokens}};
  for (const auto& [name, count] : kinds) {
    if (count != 0) {
      line.number(name, count);
    }
  }
}

/// One entry per upstream attempt: its provider, the status it answered or the code of its
/// failure, and when its answer began and ended, in ms from the attempt's start.
void upstreamAttempts(Line& line, const std::vector<exchange::AttemptRecord>& log) {
  line.array("upstream_attempts");
  bool first = true;
  for (const exchange::AttemptRecord& a : log) {
    if (!first) {
      line.close(',');
    }
    first = false;
    Line attempt(line.cursor());
    attempt.text("provider", a.provider);
    if (a.status != 0) {
      attempt.number("status", a.status);
    } else {
      attempt.text("error", a.error_code);
    }
    if (a.first_byte.count() > 0) {
      attempt.millis("first_byte_ms", a.first_byte - a.started);
    }
    if (a.ended.count() > 0) {
      attempt.millis("total_ms", a.ended - a.started);
    }
    attempt.close('}');
  }
  line.close(']');
}

/// Appends the line of one finished exchange to `out`.
void writeLine(std::string& out, const exchange::RequestContext& e) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  Cursor cursor(out);
  Line line(cursor);
  line.number("ts_ms", static_cast<std::int64_t>(now.count()));
  line.text("request_id", e.request_id);
  std::array<char, 2 * sizeof(trace::TraceId)> trace_id;
  text::writeHex(e.trace.trace_id, trace_id.data());
  line.text("trace_id", std::string_view(trace_id.data(), trace_id.size()));
  line.text("method", e.method);
  line.text("path", e.path);
  line.number("status", e.status);
  if (!e.caller.key_public_id.empty()) {
    line.text("key", e.caller.key_public_id);
    line.text("team", e.caller.team);
  }
  line.text("model", e.model);
  line.text("provider", e.provider);
  if (!e.variant.empty()) {
    line.text("variant", e.variant);
  }
  if (e.attempts > 1) {
    line.number("attempts", e.attempts);
  }
  if (e.dryrun) {
    line.raw("dryrun", "true");
  }
  if (!e.error_code.empty()) {
    line.text("error", e.error_code);
  }
  line.millis("upstream_ms", e.upstream);
  line.millis("total_ms", std::chrono::duration_cast<std::chrono::microseconds>(
                              exchange::RequestContext::Clock::now() - e.started));
  line.number("bytes_in", static_cast<std::int64_t>(e.bytes_in));
  line.number("bytes_out", static_cast<std::int64_t>(e.bytes_out));
  if (e.usage.prompt_tokens > 0 || e.usage.completion_tokens > 0) {  // No sum: counts may be huge.
    line.number("prompt_tokens", e.usage.prompt_tokens);
    line.number("completion_tokens", e.usage.completion_tokens);
  }
  tokenKinds(line, e.usage);
  if (e.cost != 0) {
    line.raw("cost", money::formatUsd(e.cost));  // USD, exact.
  }
  if (!e.model.empty()) {
    line.text("cache", cacheName(e.cache));
  }
  if (e.idempotency != exchange::KeyOutcome::None) {
    line.text("idempotency", keyName(e.idempotency));
  }
  if (!e.attempt_log.empty()) {
    upstreamAttempts(line, e.attempt_log);
  }
  line.close('}');
  cursor.put('\n');
}

}  // namespace

void AccessLog::ended(const exchange::RequestContext& e) {
  writeLine(pending_, e);
  if (pending_.size() >= kFlushBytes) {
    flush();
  } else if (!timer_armed_) {
    timer_armed_ = true;
    timer_.expires_after(kFlushDelay);
    timer_.async_wait([this](const boost::system::error_code&) {
      timer_armed_ = false;
      flush();
    });
  }
}

void AccessLog::flush() {
  if (!pending_.empty()) {
    std::fwrite(pending_.data(), 1, pending_.size(), stderr);
    pending_.clear();
  }
}

}  // namespace tollgate::net
