// A test fixture for the store's SQL: a SQLite store of its own, migrated, with one team "acme".
// Tests derive from it and call its SetUp first.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "store/migrations.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace tollgate::test {

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ =
        std::make_unique<store::Store>(store::connect({store::Engine::Sqlite, dir_.file("t.db")}));
    store::migrate(db_->connection());
    team_ = db_->createTeam("acme").id;
  }

  /// The team's balance and what is reserved of it.
  std::pair<std::int64_t, std::int64_t> balanceAndReserved(const std::string& team_id) {
    const store::Rows r =
        db_->connection().query("SELECT balance, reserved FROM teams WHERE id = $1", {team_id});
    return {r.at(0).integer(0), r.at(0).integer(1)};
  }

  TempDir dir_{"tollgate-store-test"};
  std::unique_ptr<store::Store> db_;
  std::string team_;
};

}  // namespace tollgate::test
