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
