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

#include "exchange/observer.hpp"

namespace tollgate::net {

/// One worker's access log: lines wait at most kFlushDelay, or until kFlushBytes are pending,
/// and leave in one write. Not thread-safe: one per io_context thread.
class AccessLog final : public exchange::Observer {
 public:
  static constexpr std::size_t kFlushBytes = 16 * 1024;
  static constexpr std::chrono::milliseconds kFlushDelay{100};

  explicit AccessLog(boost::asio::io_context& ioc) : timer_(ioc) {}
  ~AccessLog() override { flush(); }
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  /// Writes the line of one finished exchange.
  void ended(const exchange::RequestContext& ctx) override;
  void flush();

 private:
  std::string pending_;
  boost::asio::steady_timer timer_;
  bool timer_armed_ = false;
};

}  // namespace tollgate::net
