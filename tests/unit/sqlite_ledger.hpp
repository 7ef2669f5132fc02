// A test fixture for what bills: a SQLite store of its own (migrated, one team "acme", this
// gateway registered as "gw" and its heartbeat trusted), its writer and a Ledger on it. Tests
// derive from it and call its SetUp first.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "billing/ledger.hpp"
#include "store/migrations.hpp"
#include "store/store.hpp"
#include "store/writer.hpp"
#include "temp_dir.hpp"

namespace tollgate::test {

class SqliteLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    where_ = {store::Engine::Sqlite, dir_.file("t.db")};
    db_ = std::make_unique<store::Store>(store::connect(where_));
    store::migrate(db_->connection());
    team_ = db_->createTeam("acme").id;
    db_->registerGateway({"gw", "test-host", 0, 0, 0});
    beat(Lease::Clock::now());
    writer_ = std::make_unique<store::Writer>(where_, store::Writer::Retention{});
    ledger_ = std::make_unique<billing::Ledger>(*writer_, "gw", lease_);
  }

  /// A heartbeat that began and committed at `at`.
  void beat(Lease::Clock::time_point at) { lease_.renew(at, at); }

  /// The team's balance and what is reserved of it.
  std::pair<std::int64_t, std::int64_t> balanceAndReserved() {
    const store::Rows r =
        db_->connection().query("SELECT balance, reserved FROM teams WHERE id = $1", {team_});
    return {r.at(0).integer(0), r.at(0).integer(1)};
  }

  TempDir dir_{"tollgate-ledger-test"};
  Lease lease_{std::chrono::milliseconds(2'000)};
  store::Location where_;
  std::unique_ptr<store::Store> db_;
  std::string team_;
  std::unique_ptr<store::Writer> writer_;  ///< Made before the ledger, ended after it.
  std::unique_ptr<billing::Ledger> ledger_;
};

}  // namespace tollgate::test
