// One structured (JSON) line per request on stderr. It names no secret: no headers, no bodies,
// no query strings.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace tollgate::net {

struct AccessLogEntry {
  std::string_view method;
  std::string_view path;  ///< Without the query string.
  int status = 0;
  std::string model;
  std::chrono::microseconds upstream{0};  ///< Zero when no upstream was called.
  std::chrono::microseconds total{0};
  std::size_t bytes_in = 0;
  std::size_t bytes_out = 0;
};

void writeAccessLog(const AccessLogEntry& entry);

}  // namespace tollgate::net
