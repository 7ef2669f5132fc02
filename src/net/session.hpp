// One client connection: keep-alive, size and time limits, bytes in and out. It reads a request
// head, routes it (http::Router), reads the body within the route's limit, runs the handler with
// a RequestContext and a writer over the connection, and writes the access-log line.
#pragma once

#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <exception>
#include <unordered_set>

#include "config/live_config.hpp"
#include "exchange/observer.hpp"
#include "http/router.hpp"

namespace tollgate::net {

/// What the sessions of one worker thread share.
struct SessionShared {
  const config::LiveConfig& live;  ///< Each request pins the configuration it starts with.
  const http::Router& router;
  const std::atomic<bool>& draining;
  exchange::Observer& observer;  ///< Told once of each exchange's end (the access log first).
  std::unordered_set<boost::asio::ip::tcp::socket*> open;  ///< Every client connection.
  std::unordered_set<boost::asio::ip::tcp::socket*> idle;  ///< Those between requests.
};

/// Serves one accepted connection until it closes, fails or shutdown ends it, on the socket's
/// executor; an exception that ends it goes to `failed`.
void spawnSession(SessionShared& shared, boost::asio::ip::tcp::socket socket,
                  void (*failed)(std::exception_ptr));

}  // namespace tollgate::net
