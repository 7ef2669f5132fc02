// The port of a book the store's writer (writer.hpp) commits first: billing's ledger is one.
#pragma once

namespace tollgate::store {

/// A book of shares leased from the store (billing's ledger: escrows of teams' balances; a book of
/// rate-limit leases can be another) whose operations the writer commits before any other work,
/// in batches the book makes itself. Every method runs on the writer's thread.
class Journal {
 public:
  virtual ~Journal() = default;
  /// Commits what is queued (through Writer::transact); false when nothing was.
  virtual bool commit() = 0;
  /// Called about once a second and whenever the writer has caught up: gives back what is held
  /// unused for a while (all of it when `closing`), and does the book's upkeep.
  virtual void tick(bool closing) = 0;
};

}  // namespace tollgate::store
