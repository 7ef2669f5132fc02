// The store's alerts outbox (docs/alerts.md): the events a settlement writes when it takes a
// team's balance below a configured amount, the leases by which exactly one gateway sends each,
// and what became of each delivery.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "store/connection.hpp"

namespace tollgate::store {

/// The outbox keeps its events, delivered or not, this many days (docs/alerts.md).
inline constexpr std::int64_t kAlertRetentionDays = 30;

/// One event of the outbox, as stored.
struct AlertRow {
  std::string id;
  std::string team_id;
  std::string team;  ///< The team's name when the event was written.
  std::string type;  ///< "balance.below" or "key_budget.crossed"
  /// pico-USD: the amount crossed; key_budget.crossed: the fraction, in parts per million
  std::int64_t threshold = 0;          ///< pico-USD
  std::int64_t balance = 0;            ///< pico-USD: the balance (a key's: its spend) right after
  std::optional<std::string> key;      ///< key_budget.crossed: the key's public id
  std::optional<std::int64_t> budget;  ///< key_budget.crossed: its budget (pico-USD)
  std::int64_t created_at = 0;
  std::int64_t due_at = 0;
  std::int64_t attempts = 0;
  std::optional<std::int64_t> delivered_at;
  std::optional<std::int64_t> failed_at;
  std::optional<std::int64_t> last_status;  ///< The receiver's last HTTP status; none: no answer.
};

/// What one delivery attempt came to.
struct AlertAttempt {
  std::string id;
  std::optional<std::int64_t> status;  ///< The receiver's HTTP status; none: no answer.
  bool delivered = false;
  /// When not delivered: when to try again, or none to give up (failed_at is set).
  std::optional<std::int64_t> retry_at;
};

/// The outbox, in the caller's transaction.
class AlertStore {
 public:
  explicit AlertStore(Connection& c) : c_(&c) {}

  /// The statement that writes one "balance.below" event per amount of `thresholds` (pico-USD)
  /// that the team's balance, just debited `debited` (> 0) by the statement before it in the same
  /// transaction, fell below: balance before >= threshold > balance after; for a threshold of 0,
  /// the balance reaching 0 (a balance never goes below it). Events are due at once.
  static Statement balanceCrossings(const std::string& team_id, std::int64_t debited,
                                    std::span<const std::int64_t> thresholds, std::int64_t now_ms);

  /// A key's budget in one window, and the team it bills.
  struct KeyBudget {
    std::string team_id;
    std::string key_public_id;
    std::int64_t window_start = 0;
    std::int64_t budget = 0;  ///< pico-USD
  };
  /// The statement that writes one "key_budget.crossed" event per fraction of `ppm` (parts per
  /// million of the budget) that the key's spend in the window, just raised by `charged` (> 0) by
  /// the statement before it in the same transaction, crossed: spend before < fraction x budget
  /// <= spend after. A window's fractions are crossed again only in the next window.
  static Statement keyBudgetCrossings(const KeyBudget& key, std::int64_t charged,
                                      std::span<const std::int64_t> ppm, std::int64_t now_ms);

  /// Leases for `gateway_id` until `lease_until` up to `limit` events that are due at `now_ms`,
  /// neither delivered nor failed, and not leased by a gateway whose lease still runs: each event
  /// goes to one gateway at a time, across every gateway of the store. Returns them.
  std::vector<AlertRow> leaseAlerts(const std::string& gateway_id, std::int64_t now_ms,
                                    std::int64_t lease_until, std::int64_t limit);
  /// Records `attempt` of an event `gateway_id` leased, and ends the lease; false when the event
  /// is no longer that gateway's (its lease ran out and another took it).
  bool recordAlertAttempt(const std::string& gateway_id, const AlertAttempt& attempt,
                          std::int64_t now_ms);
  /// Events newest first: one team's, or every team's when `team_id` is empty.
  std::vector<AlertRow> listAlerts(const std::string& team_id, std::int64_t limit);
  /// Deletes events written before `before_ms`; returns how many.
  std::int64_t pruneAlerts(std::int64_t before_ms);

 private:
  Connection* c_;
};

}  // namespace tollgate::store
