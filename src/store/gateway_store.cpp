// The store's SQL for the registry of running gateways.
#include "store/gateway_store.hpp"

#include <string_view>

namespace tollgate::store {
namespace {

/// A gateway's columns, and how long ago it was seen (`now` is the store's clock).
std::string gatewayColumns(std::string_view now) {
  return "SELECT id, host, pid, seen_at, applied_seq, lease_ms, " + std::string(now) +
         " - seen_at FROM gateways ";
}

GatewayRecord gateway(const Row& r) {
  return {r.text(0),    r.text(1),    r.integer(2), r.integer(3),
          r.integer(4), r.integer(5), r.integer(6)};
}

}  // namespace

void GatewayStore::registerGateway(const GatewayRecord& g) {
  const std::string now(c_->nowMsSql());
  c_->query(
      "INSERT INTO gateways (id, host, pid, started_at, seen_at, applied_seq, lease_ms) VALUES "
      "($1, $2, $3, " +
          now + ", " + now + ", $4, $5)",
      {g.id, g.host, g.pid, g.applied_seq, g.lease_ms});
}

bool GatewayStore::heartbeat(const std::string& id, std::int64_t applied_seq) {
  return !c_->query("UPDATE gateways SET seen_at = " + std::string(c_->nowMsSql()) +
                        ", applied_seq = $1 WHERE id = $2 RETURNING 1",
                    {applied_seq, id})
              .empty();
}

void GatewayStore::unregisterGateway(const std::string& id) {
  c_->query("DELETE FROM gateways WHERE id = $1", {id});
}

std::vector<GatewayRecord> GatewayStore::gatewaysOn(const std::string& host) {
  std::vector<GatewayRecord> out;
  for (const Row& r :
       c_->query(gatewayColumns(c_->nowMsSql()) + "WHERE host = $1 ORDER BY id", {host})) {
    out.push_back(gateway(r));
  }
  return out;
}

std::vector<GatewayRecord> GatewayStore::laggingGateways(std::int64_t seq) {
  std::vector<GatewayRecord> out;
  for (const Row& r : c_->query(
           gatewayColumns(c_->nowMsSql()) + "WHERE applied_seq < $1 ORDER BY seen_at DESC, id",
           {seq})) {
    out.push_back(gateway(r));
  }
  return out;
}

void GatewayStore::forgetGatewaysUnseenFor(std::int64_t ms) {
  c_->query("DELETE FROM gateways WHERE seen_at < " + std::string(c_->nowMsSql()) + " - $1", {ms});
}

void GatewayStore::endTransactionsIdleFor(std::chrono::milliseconds limit) {
  if (c_->engine() == Engine::Postgres) {
    c_->script("SET idle_in_transaction_session_timeout = " + std::to_string(limit.count()));
  }
}

}  // namespace tollgate::store
