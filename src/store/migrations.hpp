// Versioned schema migrations, one SQL text per version, written once for both engines.
// Applied at start (and by `tollgate migrate`) in one transaction under a schema lock; a
// database whose schema is newer than this binary knows is refused. A migration may fill what it
// added with C++ where SQL cannot compute it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/connection.hpp"

namespace tollgate::store {

struct Migration {
  std::int64_t version;
  std::string_view name;
  std::string_view sql;
  /// What SQL alone cannot do, run after `sql` in the same transaction (the skeletons of names
  /// ICU computes; invitations revoked, each with its audit row); none when null.
  void (*fill)(Connection&) = nullptr;
  /// Statements run after `fill` (the unique indexes on what it filled).
  std::string_view then = {};
};

/// Every migration this binary knows, in order.
std::span<const Migration> migrations();

/// What migrate() found and did.
struct MigrationReport {
  std::int64_t from = 0;
  std::int64_t to = 0;
  /// Names kept from before names had skeletons that look like an earlier team's or active key's
  /// (the same UTS #39 skeleton): one line each, names shown with invisible characters escaped.
  /// They keep working; a new name like them is refused.
  std::vector<std::string> look_alikes;
};

/// Applies the missing migrations. Throws StoreError when the schema is newer than known.
MigrationReport migrate(Connection& c);

}  // namespace tollgate::store
