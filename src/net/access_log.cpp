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

void writeAccessLog(const AccessLogEntry& e) {
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::system_clock::now().time_since_epoch());
  json::Writer w;
  w.startObject();
  w.field("ts_ms", static_cast<std::int64_t>(now.count()));
  w.field("method", e.method);
  w.field("path", e.path);
  w.field("status", e.status);
  w.field("model", e.model);
  w.field("upstream_ms", millis(e.upstream));
  w.field("total_ms", millis(e.total));
  w.field("bytes_in", static_cast<std::int64_t>(e.bytes_in));
  w.field("bytes_out", static_cast<std::int64_t>(e.bytes_out));
  w.endObject();
  std::string line = w.take();
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace tollgate::net
