#include "billing/escrow.hpp"

#include <algorithm>

#include "core/ids.hpp"

namespace tollgate::billing {

EscrowBook::Escrow* EscrowBook::current(const std::string& team_id, const std::string& hold_id) {
  const auto it = escrows_.find(team_id);
  return it != escrows_.end() && it->second.hold_id == hold_id ? &it->second : nullptr;
}

std::optional<store::Hold> EscrowBook::take(const std::string& team_id, money::Pico amount,
                                            std::optional<std::uint64_t> epoch,
                                            Clock::time_point now) {
  const auto it = escrows_.find(team_id);
  if (it == escrows_.end() || !epoch || it->second.confirmed != epoch || it->second.free < amount) {
    return std::nullopt;
  }
  it->second.free -= amount;
  it->second.used = now;
  return store::Hold{it->second.hold_id, team_id, amount};
}

EscrowBook::Draw EscrowBook::draw(const std::string& team_id, money::Pico amount,
                                  Clock::time_point now) {
  Escrow& e = escrows_[team_id];
  if (e.hold_id.empty()) {
    e.hold_id = ids::uuidV7();
  }
  const money::Pico lent = std::min(e.free, amount);
  e.free -= lent;
  e.used = now;
  return {e.hold_id, e.stored, lent};
}

void EscrowBook::give(const std::string& team_id, const std::string& hold_id, money::Pico amount) {
  if (Escrow* e = current(team_id, hold_id)) {
    e->free += amount;
  }
}

void EscrowBook::granted(const std::string& team_id, const std::string& hold_id, money::Pico extra,
                         std::uint64_t epoch) {
  if (Escrow* e = current(team_id, hold_id)) {
    e->free += extra;
    e->stored = true;
    e->confirmed = epoch;
  }
}

void EscrowBook::refused(const std::string& team_id, const Draw& d, std::uint64_t epoch) {
  if (Escrow* e = current(team_id, d.hold_id)) {
    e->free += d.lent;
    if (e->stored) {
      e->confirmed = epoch;
    }
  }
}

void EscrowBook::settled(const std::string& team_id, const std::string& hold_id,
                         money::Pico unspent, std::uint64_t epoch) {
  if (Escrow* e = current(team_id, hold_id)) {
    e->free += unspent;
    e->confirmed = epoch;
  }
}

void EscrowBook::gone(const std::string& team_id, const std::string& hold_id) {
  if (Escrow* e = current(team_id, hold_id)) {
    *e = Escrow{};  // What was at hand is no longer reserved; the next request starts anew.
  }
}

std::vector<store::Hold> EscrowBook::takeIdle(Clock::time_point now, Clock::duration idle,
                                              bool all) {
  std::vector<store::Hold> out;
  for (auto& [team_id, e] : escrows_) {
    if (e.free > 0 && (all || now - e.used >= idle)) {
      out.push_back({e.hold_id, team_id, e.free});
      e.free = 0;
    }
  }
  return out;
}

}  // namespace tollgate::billing
