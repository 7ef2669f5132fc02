#include "store/migrations.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "temp_dir.hpp"

namespace tollgate::store {
namespace {

TEST(Migrations, AreInStrictlyIncreasingOrderFromOne) {
  std::int64_t previous = 0;
  for (const Migration& m : migrations()) {
    EXPECT_EQ(m.version, previous + 1) << m.name;
    previous = m.version;
  }
}

TEST(Migrations, ApplyOnceAndRefuseANewerSchema) {
  const test::TempDir dir("tollgate-store-test");
  const std::string path = dir.file("t.db");
  auto c = connect({Engine::Sqlite, path});
  const MigrationReport first = migrate(*c);
  EXPECT_EQ(first.from, 0);
  EXPECT_EQ(first.to, migrations().back().version);
  const MigrationReport again = migrate(*c);
  EXPECT_EQ(again.from, again.to);
  c->query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
           {again.to + 1, "from the future", std::int64_t{0}});
  EXPECT_THROW(migrate(*c), StoreError);
}

TEST(Migrations, IdempotencyAnswersKeptBeforeTheirBoundAreCounted) {
  const test::TempDir dir("tollgate-store-test");
  auto c = connect({Engine::Sqlite, dir.file("t.db")});
  // A store at version 6, with a team's kept answer and an answer not kept.
  c->script(
      "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
      "applied_at BIGINT NOT NULL)");
  for (const Migration& m : migrations()) {
    if (m.version <= 6) {
      c->script(m.sql);
      c->query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)",
               {m.version, std::string(m.name)});
    }
  }
  c->script(
      "INSERT INTO idempotency_keys (team_id, key, digest, claim_id, gateway_id, state, "
      "created_at, kept, body) VALUES ('t', 'a', 'd', 'c', 'g', 'completed', 0, 1, 'AAAAAAAA'), "
      "('t', 'b', 'd', 'c', 'g', 'completed', 0, 0, NULL)");
  EXPECT_EQ(migrate(*c).from, 6);
  const Rows sum = c->query("SELECT bytes FROM idempotency_bytes WHERE team_id = 't'");
  ASSERT_EQ(sum.size(), 1u);
  EXPECT_EQ(sum[0].integer(0), 8) << "counted by the stored size";
  const Rows rows = c->query("SELECT key, bytes FROM idempotency_keys ORDER BY key");
  EXPECT_EQ(rows.at(0).integer(1), 8);
  EXPECT_EQ(rows.at(1).integer(1), 0);
}

TEST(SqliteConnection, FileIsPrivateAndParametersAreVerbatim) {
  const test::TempDir dir("tollgate-store-test");
  const std::string path = dir.file("t.db");
  auto c = connect({Engine::Sqlite, path});
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  c->script("CREATE TABLE t (v TEXT)");
  const std::string hostile = "x'); DROP TABLE t; -- $1 ?1 \"";
  c->query("INSERT INTO t (v) VALUES ($1)", {hostile});
  const Rows rows = c->query("SELECT v FROM t");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].text(0), hostile);
}

}  // namespace
}  // namespace tollgate::store
