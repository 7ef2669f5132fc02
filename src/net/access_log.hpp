// One structured (JSON) line per request on stderr. It names no secret: no headers, no bodies,
// no query strings. Lines are written in batches, off the per-request path.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
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

/// One worker's access log: lines wait at most kFlushDelay, or until kFlushBytes are pending,
/// and leave in one write. Not thread-safe: one per io_context thread.
class AccessLog {
 public:
  static constexpr std::size_t kFlushBytes = 16 * 1024;
  static constexpr std::chrono::milliseconds kFlushDelay{100};

  explicit AccessLog(boost::asio::io_context& ioc) : timer_(ioc) {}
  ~AccessLog() { flush(); }
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  void write(const AccessLogEntry& entry);
  void flush();

 private:
  std::string pending_;
  boost::asio::steady_timer timer_;
  bool timer_armed_ = false;
};

}  // namespace tollgate::net
