// The network transport: pooled keep-alive HTTP/1.1 connections to upstreams, over TLS
// (certificates and host names verified) or plain TCP, with the provider's connect, first-byte
// and total timeouts. One per worker thread.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>

#include "providers/transport.hpp"

namespace tollgate::net {

class UpstreamPool : public providers::Transport {
 public:
  /// Closes every connection, idle or in use: calls in progress and later ones fail with
  /// ServiceUnavailable. For shutdown; call on the pool's own thread.
  virtual void close() = 0;
  /// Closes the idle connections, and each one in use once its call ends, instead of keeping
  /// it: calls in progress go on. For the start of a shutdown (an idle connection's deadline
  /// timer would keep the event loop running); call on the pool's own thread.
  virtual void drain() = 0;
};

/// The pool for a worker's io_context. It must outlive every call it started.
std::unique_ptr<UpstreamPool> makeUpstreamPool(boost::asio::io_context& ioc);

}  // namespace tollgate::net
