// The I/O floor under the open path: a proxy built on the gateway's own I/O stack (one Asio
// io_context on one thread, C++20 coroutines, a kept-alive upstream connection per client
// connection) that does nothing else. It reads a request's head and its Content-Length body,
// sends the same bytes upstream, reads the answer's head and body, and sends them back: no
// parse beyond the two heads' lengths, no JSON, no routing, no log, no allocation a request. Its
// CPU per request beside nginx's in the same rounds is what this stack asks for the open path's
// system calls and wake-ups; the open path's excess over it is the gateway's own work.
//
//   g++ -O2 -std=c++20 -o proxy_floor bench/proxy_floor.cpp
//   proxy_floor UPSTREAM_PORT [BUSY_NS]   # listens on 127.0.0.1, an ephemeral port; prints it
// BUSY_NS (0 by default): user-space time spent on each request before it is sent upstream (a
// loop reading the clock), standing in for a gateway's work: how the kernel's share of a
// request's CPU moves with the user-space work a proxy does (bench/README.md, ninth round).
// bench/run.sh runs it on the proxy's CPU as the rounds' path `floor` (BENCH_TARGETS).
#include <array>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr std::size_t kRoom = 64 * 1024;

// A message's whole length once its head has arrived (head + Content-Length), 0 before; throws
// on a head without a length, which this floor does not relay.
std::size_t messageLength(std::string_view seen) {
  const auto end = seen.find("\r\n\r\n");
  if (end == std::string_view::npos) return 0;
  const auto head = seen.substr(0, end + 2);
  std::size_t at = 0;
  while ((at = head.find('\n', at)) != std::string_view::npos) {
    ++at;
    constexpr std::string_view kName = "content-length:";
    if (head.size() - at < kName.size()) break;
    // Every byte of kName has bit 0x20 set, so setting it in the head's byte folds case alone.
    bool same = true;
    for (std::size_t i = 0; i < kName.size() && same; ++i) same = (head[at + i] | 0x20) == kName[i];
    if (!same) continue;
    auto from = head.data() + at + kName.size();
    while (*from == ' ') ++from;
    std::size_t length = 0;
    if (std::from_chars(from, head.data() + head.size(), length).ec != std::errc{}) break;
    return end + 4 + length;
  }
  throw std::runtime_error("a message without Content-Length");
}

// Reads one whole message into room (a message is never larger than it), returns its length.
asio::awaitable<std::size_t> readMessage(tcp::socket& socket, std::array<char, kRoom>& room) {
  std::size_t have = 0, want = 0;
  while (want == 0 || have < want) {
    if (have == room.size()) throw std::runtime_error("a message larger than the floor's room");
    have += co_await socket.async_read_some(asio::buffer(room.data() + have, room.size() - have),
                                            asio::use_awaitable);
    if (want == 0) want = messageLength({room.data(), have});
  }
  co_return want;
}

/// Spends `ns` of this thread's time (0: none).
void busy(std::chrono::nanoseconds ns) {
  if (ns.count() == 0) return;
  const auto until = std::chrono::steady_clock::now() + ns;
  while (std::chrono::steady_clock::now() < until) {
  }
}

asio::awaitable<void> relay(tcp::socket client, tcp::endpoint upstream_at,
                            std::chrono::nanoseconds work) {
  tcp::socket upstream(client.get_executor());
  std::array<char, kRoom> room;
  try {
    co_await upstream.async_connect(upstream_at, asio::use_awaitable);
    upstream.set_option(tcp::no_delay(true));
    for (;;) {
      auto length = co_await readMessage(client, room);
      busy(work);
      co_await asio::async_write(upstream, asio::buffer(room.data(), length), asio::use_awaitable);
      length = co_await readMessage(upstream, room);
      co_await asio::async_write(client, asio::buffer(room.data(), length), asio::use_awaitable);
    }
  } catch (const std::exception&) {
    // The client hung up (or a message this floor does not relay): the connection ends.
  }
}

asio::awaitable<void> accept(tcp::acceptor& acceptor, tcp::endpoint upstream_at,
                             std::chrono::nanoseconds work) {
  for (;;) {
    auto client = co_await acceptor.async_accept(asio::use_awaitable);
    client.set_option(tcp::no_delay(true));
    asio::co_spawn(acceptor.get_executor(), relay(std::move(client), upstream_at, work),
                   asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: proxy_floor UPSTREAM_PORT [BUSY_NS]\n");
    return 2;
  }
  const auto loopback = asio::ip::make_address_v4("127.0.0.1");
  const tcp::endpoint upstream_at(loopback, static_cast<unsigned short>(std::atoi(argv[1])));
  const std::chrono::nanoseconds work(argc == 3 ? std::atol(argv[2]) : 0);
  asio::io_context io(1);
  tcp::acceptor acceptor(io, tcp::endpoint(loopback, 0));
  std::printf("%u\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  asio::co_spawn(io, accept(acceptor, upstream_at, work), asio::detached);
  io.run();
}
