// The store: every aggregate's SQL over one Connection (SQLite or PostgreSQL) it owns. Each
// aggregate is a class of its own, made over a connection, in a header of its own, so that a
// client includes only what it uses: accounts_store.hpp (teams, users, memberships, invitations,
// keys), billing_store.hpp (balances, holds, the spend log), idempotency_store.hpp and
// cache_store.hpp, console_store.hpp (sign-ins, the audit log), gateway_store.hpp (the running
// gateways), alert_store.hpp (the alerts' outbox). Store is all of them at once, for the command
// line, accounts/ and tests. It holds the SQL and nothing else: rules and permissions live in
// accounts/, key formats in auth/. Every method blocks its thread; the gateway calls it only from
// threads of its own.
#pragma once

#include <memory>
#include <utility>

#include "store/accounts_store.hpp"
#include "store/alert_store.hpp"
#include "store/billing_store.hpp"
#include "store/cache_store.hpp"
#include "store/connection.hpp"
#include "store/console_store.hpp"
#include "store/gateway_store.hpp"
#include "store/idempotency_store.hpp"

namespace tollgate::store {

class Store : public AccountsStore,
              public BillingStore,
              public IdempotencyStore,
              public CacheStore,
              public ConsoleStore,
              public GatewayStore,
              public AlertStore {
 public:
  explicit Store(std::unique_ptr<Connection> c)
      : AccountsStore(*c),
        BillingStore(*c),
        IdempotencyStore(*c),
        CacheStore(*c),
        ConsoleStore(*c),
        GatewayStore(*c),
        AlertStore(*c),
        c_(std::move(c)) {}
  Connection& connection() { return *c_; }

 private:
  std::unique_ptr<Connection> c_;
};

}  // namespace tollgate::store
