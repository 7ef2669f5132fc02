// Writes that do not wait for the event loop when the kernel takes the bytes at once, which is
// almost always: the write is tried in place, and only a remainder the socket cannot take waits
// for it asynchronously. An asynchronous write that completes at once still costs a trip through
// the scheduler (a completion posted, the reactor polled, the coroutine resumed) on the hot path.
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <chrono>
#include <optional>
#include <tuple>

namespace tollgate::net {

/// Writes all of `buffers` to `stream`. Returns the error, if any, and the bytes written. The
/// asynchronous part, if any, is bounded by `timeout` (the stream's timeout is cleared after it),
/// or without one by the timeout the caller has set on the stream.
template <class ConstBufferSequence>
boost::asio::awaitable<std::tuple<boost::system::error_code, std::size_t>> writeNow(
    boost::beast::tcp_stream& stream, const ConstBufferSequence& buffers,
    std::optional<std::chrono::seconds> timeout = std::nullopt) {
  auto& socket = stream.socket();
  boost::system::error_code ec;
  if (!socket.non_blocking()) {
    socket.non_blocking(true, ec);  // Once per connection: write_some must never block.
  }
  const std::size_t total = boost::asio::buffer_size(buffers);
  std::size_t done = ec ? 0 : socket.write_some(buffers, ec);
  if (ec && ec != boost::asio::error::would_block && ec != boost::asio::error::try_again) {
    co_return std::make_tuple(ec, done);
  }
  if (done == total) {
    co_return std::make_tuple(boost::system::error_code{}, done);
  }
  boost::beast::buffers_suffix<ConstBufferSequence> rest(buffers);
  rest.consume(done);
  if (timeout) {
    stream.expires_after(*timeout);
  }
  auto [wec, n] = co_await boost::asio::async_write(
      stream, rest, boost::asio::as_tuple(boost::asio::use_awaitable));
  if (timeout) {
    stream.expires_never();
  }
  co_return std::make_tuple(wec, done + n);
}

}  // namespace tollgate::net
