// One gateway's escrows, a team each: money reserved in the store (a row of `holds`) from which
// the gateway admits requests in memory. Store-free and single-threaded: the Ledger asks the
// store and tells this book what became of each operation, under one mutex of its own.
//
// An escrow is spent in memory only while it is trusted: its row was found in the store during
// the current Lease epoch (see core/lease.hpp). One whose row the store no longer has
// (reclaimed from a gateway taken for dead) is forgotten, and the next request starts a new one.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/money.hpp"
#include "store/billing_store.hpp"

namespace tollgate::billing {

class EscrowBook {
 public:
  using Clock = std::chrono::steady_clock;

  /// What a request bound for the store took of its team's escrow.
  struct Draw {
    std::string hold_id;    ///< The escrow's row: added to, or made.
    bool existing = false;  ///< The row was made in the store before.
    money::Pico lent = 0;   ///< The part of the request's amount the escrow had at hand.
  };

  /// Takes `amount` for a request of `team_id` from what is at hand, when there is that much and
  /// the escrow is trusted in `epoch` (nullopt: nothing is trusted); the escrow's hold, or
  /// nullopt when the store must be asked.
  std::optional<store::Hold> take(const std::string& team_id, money::Pico amount,
                                  std::optional<std::uint64_t> epoch, Clock::time_point now);
  /// Lends what is at hand, up to `amount`, to a request the store is asked for; makes the
  /// team's escrow (a new row id) when it has none.
  Draw draw(const std::string& team_id, money::Pico amount, Clock::time_point now);
  /// Gives `amount` back to hold `h.id` (a request that ended unsettled, a loan not taken), if
  /// that is still the team's escrow.
  void give(const std::string& team_id, const std::string& hold_id, money::Pico amount);

  /// The store granted a request on hold `hold_id`, and `extra` more for the next ones; its row
  /// was there in `epoch`.
  void granted(const std::string& team_id, const std::string& hold_id, money::Pico extra,
               std::uint64_t epoch);
  /// The store refused a request drawn as `d` (the balance could not cover it): the loan goes
  /// back; its row, if made, was there in `epoch`.
  void refused(const std::string& team_id, const Draw& d, std::uint64_t epoch);
  /// A request on hold `hold_id` settled, its row still there in `epoch`: what it did not cost
  /// (`unspent`) is at hand again.
  void settled(const std::string& team_id, const std::string& hold_id, money::Pico unspent,
               std::uint64_t epoch);
  /// The store no longer has hold `hold_id`: if it is the team's escrow, it is forgotten.
  void gone(const std::string& team_id, const std::string& hold_id);

  /// Takes out what is at hand of the escrows unused for `idle` (all of them when `all`), to be
  /// given back to their balances.
  std::vector<store::Hold> takeIdle(Clock::time_point now, Clock::duration idle, bool all);

 private:
  struct Escrow {
    std::string hold_id;     ///< Its row in `holds`; another one once the store lost it.
    money::Pico free = 0;    ///< Reserved in the store, promised to no request.
    Clock::time_point used;  ///< When a request last took from it.
    bool stored = false;     ///< Its row was made in the store.
    /// The Lease epoch in which its row was last found in the store, if any.
    std::optional<std::uint64_t> confirmed;
  };
  /// The team's escrow when it is hold `hold_id`; nullptr otherwise.
  Escrow* current(const std::string& team_id, const std::string& hold_id);

  std::unordered_map<std::string, Escrow> escrows_;  ///< By team id.
};

}  // namespace tollgate::billing
