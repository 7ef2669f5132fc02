#include "net/access_log.hpp"

#include <cstdio>

#include "core/json.hpp"

namespace tollgate::net {
namespace {

double millis(std::chrono::microseconds us) {
  constexpr double kMicrosPerMilli = 1000.0;
  return static_cast<double>(us.count()) / kMicrosPerMilli;
}

}  // namespace

void AccessLog::ended(const exchange::RequestContext& e) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  json::Writer w;
  w.startObject();
  w.field("ts_ms", static_cast<std::int64_t>(now.count()));
  w.field("request_id", e.request_id);
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
  w.field("upstream_ms", millis(e.upstream));
  w.field("total_ms", millis(std::chrono::duration_cast<std::chrono::microseconds>(
                          exchange::RequestContext::Clock::now() - e.started)));
  w.field("bytes_in", static_cast<std::int64_t>(e.bytes_in));
  w.field("bytes_out", static_cast<std::int64_t>(e.bytes_out));
  if (e.usage.prompt_tokens > 0 || e.usage.completion_tokens > 0) {  // No sum: counts may be huge.
    w.field("prompt_tokens", e.usage.prompt_tokens);
    w.field("completion_tokens", e.usage.completion_tokens);
  }
  w.endObject();
  pending_ += w.take();
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
