#include "store/limits_store.hpp"

#include <algorithm>

namespace tollgate::store {

LimitGrant LimitsStore::grant(const std::string& limit_id, std::int64_t window_start,
                              std::int64_t ends_at, std::int64_t need, std::int64_t want,
                              std::int64_t limit, const std::string& gateway_id) {
  // Made, or locked as it is (PostgreSQL's row lock; SQLite's writer holds the database's), and
  // read: the rest of the transaction decides on a count no other gateway can move.
  const Rows rows = c_->query(
      "INSERT INTO limit_counters (limit_id, window_start, ends_at, used) VALUES ($1, $2, $3, 0) "
      "ON CONFLICT (limit_id, window_start) DO UPDATE SET used = limit_counters.used "
      "RETURNING used, " +
          std::string(c_->nowMsSql()),
      {limit_id, window_start, ends_at});
  LimitGrant g;
  g.used = rows.at(0).integer(0);
  g.now_ms = rows.at(0).integer(1);
  if (g.used > limit - need) {
    return g;
  }
  g.granted = std::min(want, limit - g.used);
  g.used += g.granted;
  c_->query("UPDATE limit_counters SET used = used + $3 WHERE limit_id = $1 AND window_start = $2",
            {limit_id, window_start, g.granted});
  if (window_start == 0) {
    c_->query(
        "INSERT INTO limit_slots (limit_id, gateway_id, held) VALUES ($1, $2, $3) "
        "ON CONFLICT (limit_id, gateway_id) DO UPDATE SET held = limit_slots.held + $3",
        {limit_id, gateway_id, g.granted});
  }
  return g;
}

void LimitsStore::giveBack(const std::string& limit_id, std::int64_t window_start,
                           std::int64_t amount, const std::string& gateway_id) {
  if (window_start == 0 &&
      c_->query("UPDATE limit_slots SET held = held - $3 WHERE limit_id = $1 AND gateway_id = $2 "
                "AND held >= $3 RETURNING held",
                {limit_id, gateway_id, amount})
          .empty()) {
    return;  // Reclaimed meanwhile: the counter no longer holds them.
  }
  c_->query(
      "UPDATE limit_counters SET used = CASE WHEN used > $3 THEN used - $3 ELSE 0 END "
      "WHERE limit_id = $1 AND window_start = $2",
      {limit_id, window_start, amount});
}

void LimitsStore::reclaim(std::int64_t dead_ms, std::int64_t keep_ms) {
  const std::string now(c_->nowMsSql());
  const Rows dead = c_->query(
      "SELECT s.limit_id, s.gateway_id, s.held FROM limit_slots s WHERE NOT EXISTS (SELECT 1 "
      "FROM gateways g WHERE g.id = s.gateway_id AND g.seen_at >= " +
          now + " - $1)",
      {dead_ms});
  for (const Row& r : dead) {
    c_->query(
        "UPDATE limit_counters SET used = CASE WHEN used > $2 THEN used - $2 ELSE 0 END "
        "WHERE limit_id = $1 AND window_start = 0",
        {r.text(0), r.integer(2)});
    c_->query("DELETE FROM limit_slots WHERE limit_id = $1 AND gateway_id = $2",
              {r.text(0), r.text(1)});
  }
  c_->query("DELETE FROM limit_counters WHERE ends_at > 0 AND ends_at < " + now + " - $1",
            {keep_ms});
  // A key's spend of a budget window that ended (a month is the longest; a total budget's window
  // starts at 1 and never ends).
  constexpr std::int64_t kLongestWindowMs = 32LL * 24 * 3600 * 1000;
  c_->query("DELETE FROM key_spend WHERE window_start > 1 AND window_start < " + now + " - $1",
            {kLongestWindowMs});
}

std::int64_t LimitsStore::liveGateways(std::int64_t dead_ms) {
  return c_
      ->query(
          "SELECT COUNT(*) FROM gateways WHERE seen_at >= " + std::string(c_->nowMsSql()) + " - $1",
          {dead_ms})
      .at(0)
      .integer(0);
}

std::int64_t LimitsStore::nowMs() {
  return c_->query("SELECT " + std::string(c_->nowMsSql())).at(0).integer(0);
}

}  // namespace tollgate::store
