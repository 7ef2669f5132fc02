// The Observer port: the one place an exchange is seen to end. The session calls it once per
// exchange, synchronously, on the I/O thread that ends it, with the final record
// (RequestContext: route, status and error code, each upstream attempt with its provider, outcome
// and times (started, connected, first byte, ended), tokens by kind, cost, the cache's and the
// Idempotency-Key's outcome, team, key id, model, variant, request id, its trace and the spans of
// the exchange and of each attempt; never a header, cookie, key or body). A subscriber must
// neither block nor do I/O there: one that exports queues what it needs and returns. The access
// log is the first subscriber; the span exporter and the metrics (telemetry/) subscribe beside
// it. The session also tells it when a client connection opens and closes and a streamed answer
// begins and ends.
#pragma once

#include <vector>

#include "exchange/request_context.hpp"

namespace tollgate::exchange {

class Observer {
 public:
  virtual ~Observer() = default;
  /// `ctx` has ended: its record is final.
  virtual void ended(const RequestContext& ctx) = 0;
  /// A client connection of the worker opened (+1) or closed (-1).
  virtual void connections(int /*delta*/) {}
  /// A streamed answer of the worker began (+1) or ended (-1).
  virtual void streams(int /*delta*/) {}
};

/// Several observers, called in the order they were added.
class Observers final : public Observer {
 public:
  void add(Observer& o) { observers_.push_back(&o); }
  void ended(const RequestContext& ctx) override {
    for (Observer* o : observers_) {
      o->ended(ctx);
    }
  }
  void connections(int delta) override {
    for (Observer* o : observers_) {
      o->connections(delta);
    }
  }
  void streams(int delta) override {
    for (Observer* o : observers_) {
      o->streams(delta);
    }
  }

 private:
  std::vector<Observer*> observers_;
};

}  // namespace tollgate::exchange
