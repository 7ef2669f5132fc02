// One structured (JSON) line per exchange on stderr, read from its RequestContext. It names no
// secret: no headers, no bodies, no query strings. Lines are written in batches, off the
// per-request path.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "exchange/request_context.hpp"

namespace tollgate::net {

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

  /// The line of one finished exchange.
  void write(const exchange::RequestContext& ctx);
  void flush();

 private:
  std::string pending_;
  boost::asio::steady_timer timer_;
  bool timer_armed_ = false;
};

}  // namespace tollgate::net
