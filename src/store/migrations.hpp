// Versioned schema migrations, one SQL text per version, written once for both engines.
// Applied at start (and by `tollgate migrate`) in one transaction under a schema lock; a
// database whose schema is newer than this binary knows is refused.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "store/connection.hpp"

namespace tollgate::store {

struct Migration {
  std::int64_t version;
  std::string_view name;
  std::string_view sql;
  /// What SQL alone cannot do, run after `sql` in the same transaction; may be null.
  void (*then)(Connection&) = nullptr;
};

/// Every migration this binary knows, in order.
std::span<const Migration> migrations();

/// What migrate() found and did.
struct MigrationReport {
  std::int64_t from = 0;
  std::int64_t to = 0;
};

/// Applies the missing migrations. Throws StoreError when the schema is newer than known.
MigrationReport migrate(Connection& c);

}  // namespace tollgate::store
