#include "net/access_log.hpp"

#include <array>
#include <cstdio>
#include <utility>

#include "core/json.hpp"
#include "core/money.hpp"
#include "core/text.hpp"
#include "core/trace_context.hpp"

namespace tollgate::net {
namespace {

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
void tokenKinds(json::Writer& w, const exchange::TokenUsage& u) {
  const std::pair<std::string_view, std::int64_t> kinds[] = {
      {"cached_tokens", u.cached_tokens},
      {"cache_write_tokens", u.cache_write_tokens},
      {"cache_write_1h_tokens", u.cache_write_1h_tokens},
      {"audio_prompt_tokens", u.audio_prompt_tokens},
      {"reasoning_tokens", u.reasoning_tokens},
      {"audio_completion_tokens", u.audio_completion_tokens}};
  for (const auto& [name, count] : kinds) {
    if (count != 0) {
      w.field(name, count);
    }
  }
}

/// One entry per upstream attempt: its provider, the status it answered or the code of its
/// failure, and when its answer began and ended, in ms from the attempt's start.
void upstreamAttempts(json::Writer& w, const std::vector<exchange::AttemptRecord>& log) {
  w.key("upstream_attempts");
  w.startArray();
  for (const exchange::AttemptRecord& a : log) {
    w.startObject();
    w.field("provider", a.provider);
    if (a.status != 0) {
      w.field("status", a.status);
    } else {
      w.field("error", a.error_code);
    }
    if (a.first_byte.count() > 0) {
      w.key("first_byte_ms");
      w.rawNumber(text::millisText(a.first_byte - a.started));
    }
    if (a.ended.count() > 0) {
      w.key("total_ms");
      w.rawNumber(text::millisText(a.ended - a.started));
    }
    w.endObject();
  }
  w.endArray();
}

/// Room for a line with a few upstream attempts, so that it is written without growing.
constexpr std::size_t kLineBytes = 1024;

}  // namespace

void AccessLog::ended(const exchange::RequestContext& e) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  json::Writer w(kLineBytes);
  w.startObject();
  w.field("ts_ms", static_cast<std::int64_t>(now.count()));
  w.field("request_id", e.request_id);
  std::array<char, 2 * sizeof(trace::TraceId)> trace_id;
  trace::writeHex(e.trace.trace_id, trace_id.data());
  w.field("trace_id", std::string_view(trace_id.data(), trace_id.size()));
  w.field("method", e.method);
  w.field("path", e.path);
  w.field("status", e.status);
  if (!e.caller.key_public_id.empty()) {
    w.field("key", e.caller.key_public_id);
    w.field("team", e.caller.team);
  }
  w.field("model", e.model);
  w.field("provider", e.provider);
  if (!e.variant.empty()) {
    w.field("variant", e.variant);
  }
  if (e.attempts > 1) {
    w.field("attempts", e.attempts);
  }
  if (e.dryrun) {
    w.field("dryrun", true);
  }
  if (!e.error_code.empty()) {
    w.field("error", e.error_code);
  }
  w.key("upstream_ms");
  w.rawNumber(text::millisText(e.upstream));
  w.key("total_ms");
  w.rawNumber(text::millisText(std::chrono::duration_cast<std::chrono::microseconds>(
      exchange::RequestContext::Clock::now() - e.started)));
  w.field("bytes_in", static_cast<std::int64_t>(e.bytes_in));
  w.field("bytes_out", static_cast<std::int64_t>(e.bytes_out));
  if (e.usage.prompt_tokens > 0 || e.usage.completion_tokens > 0) {  // No sum: counts may be huge.
    w.field("prompt_tokens", e.usage.prompt_tokens);
    w.field("completion_tokens", e.usage.completion_tokens);
  }
  tokenKinds(w, e.usage);
  if (e.cost != 0) {
    w.key("cost");
    w.rawNumber(money::formatUsd(e.cost));  // USD, exact.
  }
  if (!e.model.empty()) {
    w.field("cache", cacheName(e.cache));
  }
  if (e.idempotency != exchange::KeyOutcome::None) {
    w.field("idempotency", keyName(e.idempotency));
  }
  if (!e.attempt_log.empty()) {
    upstreamAttempts(w, e.attempt_log);
  }
  w.endObject();
  pending_ += w.text();
  pending_.push_back('\n');
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
