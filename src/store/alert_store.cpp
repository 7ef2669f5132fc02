// The store's SQL for the alerts outbox.
#include "store/alert_store.hpp"

#include "core/ids.hpp"

namespace tollgate::store {
namespace {

constexpr std::string_view kColumns =
    "SELECT id, team_id, team, type, threshold, balance, created_at, due_at, attempts, "
    "delivered_at, failed_at, last_status, key_public_id, budget FROM alert_outbox ";

AlertRow alertRow(const Row& r) {
  AlertRow a;
  a.id = r.text(0);
  a.team_id = r.text(1);
  a.team = r.text(2);
  a.type = r.text(3);
  a.threshold = r.integer(4);
  a.balance = r.integer(5);
  a.created_at = r.integer(6);
  a.due_at = r.integer(7);
  a.attempts = r.integer(8);
  a.delivered_at = r.optionalInteger(9);
  a.failed_at = r.optionalInteger(10);
  a.last_status = r.optionalInteger(11);
  a.key = r.optionalText(12);
  a.budget = r.optionalInteger(13);
  return a;
}

}  // namespace

Statement AlertStore::balanceCrossings(const std::string& team_id, std::int64_t debited,
                                       std::span<const std::int64_t> thresholds,
                                       std::int64_t now_ms) {
  // One row per threshold (its amount and the id its event would take), joined to the team's
  // row as the debit before left it: before = after + debited. Casts type the parameters for
  // PostgreSQL, which cannot infer them from a select list.
  std::vector<Param> params{team_id, debited, now_ms};
  std::string amounts;
  for (const std::int64_t threshold : thresholds) {
    params.emplace_back(threshold);
    params.emplace_back(ids::uuidV7());
    amounts += std::string(amounts.empty() ? "" : " UNION ALL ") + "SELECT CAST($" +
               std::to_string(params.size() - 1) + " AS BIGINT) AS amount, CAST($" +
               std::to_string(params.size()) + " AS TEXT) AS id";
  }
  return {
      "INSERT INTO alert_outbox (id, team_id, team, type, threshold, balance, created_at, "
      "due_at) SELECT th.id, t.id, t.name, 'balance.below', th.amount, t.balance, "
      "CAST($3 AS BIGINT), CAST($3 AS BIGINT) FROM teams t, (" +
          amounts +
          ") th WHERE t.id = $1 AND ((th.amount > 0 AND t.balance < th.amount AND "
          "t.balance + CAST($2 AS BIGINT) >= th.amount) OR (th.amount = 0 AND t.balance <= 0 "
          "AND t.balance + CAST($2 AS BIGINT) > 0))",
      std::move(params)};
}

Statement AlertStore::keyBudgetCrossings(const KeyBudget& key, std::int64_t charged,
                                         std::span<const std::int64_t> ppm, std::int64_t now_ms) {
  constexpr std::int64_t kPpm = 1'000'000;
  std::vector<Param> params{key.team_id, key.key_public_id, key.window_start,
                            charged,     key.budget,        now_ms};
  std::string fractions;
  for (const std::int64_t f : ppm) {
    // The amount a fraction is crossed at: the budget's part, rounded up to a pico-USD.
    const auto amount =
        static_cast<std::int64_t>((static_cast<__int128>(key.budget) * f + kPpm - 1) / kPpm);
    params.emplace_back(f);
    params.emplace_back(amount);
    params.emplace_back(ids::uuidV7());
    const std::size_t n = params.size();
    fractions += std::string(fractions.empty() ? "" : " UNION ALL ") + "SELECT CAST($" +
                 std::to_string(n - 2) + " AS BIGINT) AS ppm, CAST($" + std::to_string(n - 1) +
                 " AS BIGINT) AS amount, CAST($" + std::to_string(n) + " AS TEXT) AS id";
  }
  return {
      "INSERT INTO alert_outbox (id, team_id, team, type, threshold, balance, created_at, "
      "due_at, key_public_id, budget) SELECT th.id, t.id, t.name, 'key_budget.crossed', th.ppm, "
      "ks.spent, CAST($6 AS BIGINT), CAST($6 AS BIGINT), ks.key_public_id, CAST($5 AS BIGINT) "
      "FROM teams t, key_spend ks, (" +
          fractions +
          ") th WHERE t.id = $1 AND ks.key_public_id = $2 AND ks.window_start = $3 AND "
          "ks.spent >= th.amount AND ks.spent - CAST($4 AS BIGINT) < th.amount",
      std::move(params)};
}

std::vector<AlertRow> AlertStore::leaseAlerts(const std::string& gateway_id, std::int64_t now_ms,
                                              std::int64_t lease_until, std::int64_t limit) {
  // The outer condition is checked again on each row as locked (PostgreSQL re-reads a row another
  // transaction changed before updating it): of gateways leasing at once, one gets each event.
  const std::string free =
      "delivered_at IS NULL AND failed_at IS NULL AND due_at <= $3 AND "
      "(lease_until IS NULL OR lease_until <= $3)";
  std::vector<AlertRow> out;
  for (const Row& r : c_->query(
           "UPDATE alert_outbox SET leased_by = $1, lease_until = $2 WHERE id IN (SELECT id FROM "
           "alert_outbox WHERE " +
               free + " ORDER BY due_at LIMIT $4) AND " + free +
               " RETURNING id, team_id, team, type, threshold, balance, created_at, due_at, "
               "attempts, delivered_at, failed_at, last_status, key_public_id, budget",
           {gateway_id, lease_until, now_ms, limit})) {
    out.push_back(alertRow(r));
  }
  return out;
}

bool AlertStore::recordAlertAttempt(const std::string& gateway_id, const AlertAttempt& attempt,
                                    std::int64_t now_ms) {
  const Param status = attempt.status ? Param(*attempt.status) : Param();
  const Param delivered = attempt.delivered ? Param(now_ms) : Param();
  const Param failed = !attempt.delivered && !attempt.retry_at ? Param(now_ms) : Param();
  const Param due = attempt.retry_at ? Param(*attempt.retry_at) : Param();
  return !c_->query(
                "UPDATE alert_outbox SET attempts = attempts + 1, last_status = $1, "
                "delivered_at = $2, failed_at = $3, due_at = COALESCE(CAST($4 AS BIGINT), due_at), "
                "leased_by = NULL, lease_until = NULL WHERE id = $5 AND leased_by = $6 AND "
                "delivered_at IS NULL AND failed_at IS NULL RETURNING 1",
                {status, delivered, failed, due, attempt.id, gateway_id})
              .empty();
}

std::vector<AlertRow> AlertStore::listAlerts(const std::string& team_id, std::int64_t limit) {
  std::vector<AlertRow> out;
  const Rows rows =
      team_id.empty()
          ? c_->query(std::string(kColumns) + "ORDER BY created_at DESC, id DESC LIMIT $1", {limit})
          : c_->query(std::string(kColumns) +
                          "WHERE team_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
                      {team_id, limit});
  for (const Row& r : rows) {
    out.push_back(alertRow(r));
  }
  return out;
}

std::int64_t AlertStore::pruneAlerts(std::int64_t before_ms) {
  return static_cast<std::int64_t>(
      c_->query("DELETE FROM alert_outbox WHERE created_at < $1 RETURNING 1", {before_ms}).size());
}

}  // namespace tollgate::store
