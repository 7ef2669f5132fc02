#include "store/migrations.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <stdexcept>

#include "store/store.hpp"
#include "temp_dir.hpp"

namespace tollgate::store {
namespace {

/// A new SQLite store at schema `version`: the migrations up to it applied as migrate() does,
/// so that a test can put rows of that schema in before migrating the rest.
std::unique_ptr<Connection> storeAt(const test::TempDir& dir, std::int64_t version) {
  auto c = connect({Engine::Sqlite, dir.file("t.db")});
  c->script(
      "CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
      "applied_at BIGINT NOT NULL)");
  for (const Migration& m : migrations()) {
    if (m.version <= version) {
      c->script(m.sql);
      if (m.fill != nullptr) {
        m.fill(*c);
      }
      if (!m.then.empty()) {
        c->script(m.then);
      }
      c->query("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, 0)",
               {m.version, std::string(m.name)});
    }
  }
  return c;
}

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
  // A store at version 6, with a team's kept answer and an answer not kept.
  auto c = storeAt(dir, 6);
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

/// The migration that gives names their skeletons.
const Migration& skeletonMigration() {
  for (const Migration& m : migrations()) {
    if (m.name.starts_with("skeletons of team and key names")) {
      return m;
    }
  }
  throw std::logic_error("no migration of name skeletons");
}

TEST(Migrations, LookAlikeNamesFromBeforeSkeletonsKeepWorkingAndAreListed) {
  const test::TempDir dir("tollgate-store-test");
  const std::int64_t before = skeletonMigration().version - 1;
  auto c = storeAt(dir, before);
  // "default", then a look-alike with a Cyrillic е made later, each with two active keys that
  // look alike and a revoked one like them.
  int n = 0;
  for (const std::string team : {"default", "d\u0435fault"}) {
    const std::string id = "team-" + std::to_string(++n);
    c->query("INSERT INTO teams (id, name, state, created_at) VALUES ($1, $2, 'active', $3)",
             {id, team, std::int64_t{n}});
    for (const std::string key : {"ci", "c\u0456", "\u0441i"}) {
      ++n;
      c->query(
          "INSERT INTO api_keys (id, public_id, secret_hash, name, team_id, created_at, "
          "revoked_at) VALUES ($1, $2, 'h', $3, $4, $5, $6)",
          {"key-" + std::to_string(n), "pub" + std::to_string(n), key, id, std::int64_t{n},
           key == "ci" ? Param{std::int64_t{1}} : Param{}});
    }
  }
  const MigrationReport report = migrate(*c);
  EXPECT_EQ(report.from, before);
  EXPECT_EQ(report.look_alikes,
            (std::vector<std::string>{
                "team \"d\u0435fault\" looks like team \"default\"",
                "key pub4 \"\u0441i\" of team \"default\" looks like its key \"c\u0456\"",
                "key pub8 \"\u0441i\" of team \"d\u0435fault\" looks like its key \"c\u0456\""}));
  // Both teams are there; a third like them cannot be written, nor a third active key.
  EXPECT_EQ(c->query("SELECT COUNT(*) FROM teams").at(0).integer(0), 2);
  EXPECT_THROW(c->query("INSERT INTO teams (id, name, state, created_at, name_skeleton) "
                        "SELECT 'x', 'defau1t', 'active', 0, name_skeleton FROM teams "
                        "WHERE id = 'team-1'"),
               StoreError);
  EXPECT_THROW(c->query("INSERT INTO api_keys (id, public_id, secret_hash, name, team_id, "
                        "created_at, name_skeleton) SELECT 'k', 'p', 'h', 'ci', team_id, 0, "
                        "name_skeleton FROM api_keys WHERE id = 'key-3'"),
               StoreError);
  EXPECT_EQ(migrate(*c).look_alikes, report.look_alikes) << "listed on every run";
}

TEST(Migrations, ElevenReadsOldSpendRowsAggregatesAndCacheEntriesAsNoCachedTokens) {
  const test::TempDir dir("tollgate-store-test");
  auto c = storeAt(dir, 10);
  c->script(
      "INSERT INTO teams (id, name, state, created_at) VALUES ('t', 'acme', 'active', 0);"
      "INSERT INTO spend (request_id, created_at, team_id, key_public_id, endpoint, model, "
      "provider, variant, episode_id, prompt_tokens, completion_tokens, cost, tags, status, "
      "upstream_ms, streamed, estimated, cache_hit) VALUES ('r', 0, 't', '', 'chat', 'm', 'p', "
      "'', 'e', 1000, 40, 7, '{}', 200, 5, 0, 0, 0);"
      "INSERT INTO spend_daily (team_id, day, model, key_public_id, requests, prompt_tokens, "
      "completion_tokens, cost) VALUES ('t', '1970-01-01', 'm', '', 1, 1000, 40, 7);"
      "INSERT INTO inference_cache (team_id, key, endpoint, created_at, bytes, prompt_tokens, "
      "completion_tokens, body) VALUES ('t', 'k', 'chat', 0, 0, 1000, 40, '')");
  EXPECT_EQ(migrate(*c).from, 10);
  Store store(std::move(c));
  const std::vector<SpendRow> rows = store.listSpend({.team_id = "t"});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].prompt_tokens, 1000);
  EXPECT_EQ(rows[0].cost, 7);
  EXPECT_EQ(rows[0].kinds, TokenKinds{});
  const std::vector<SpendTotal> totals = store.summarizeSpend("t", SpendGroup::Model, "");
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].requests, 1);
  EXPECT_EQ(totals[0].kinds, TokenKinds{});
  const auto entry = store.findCacheEntry("t", "k", 0);
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->kinds, TokenKinds{});

  // New rows add their kinds to the aggregate the old one is in.
  SpendRow r = rows[0];
  r.request_id = "r2";
  r.kinds.cached_tokens = 800;
  Settlement s{"", r, true};
  store.settle(std::span(&s, 1));
  EXPECT_EQ(store.summarizeSpend("t", SpendGroup::Model, "").at(0).kinds.cached_tokens, 800);
  EXPECT_EQ(store.summarizeSpend("t", SpendGroup::Model, "").at(0).requests, 2);
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

TEST(SqliteConnection, NumbersAreBoundAsNumbersAndBorrowedTextAsIs) {
  const test::TempDir dir("tollgate-store-test");
  auto c = connect({Engine::Sqlite, dir.file("t.db")});
  const std::string text = "borrowed, not copied: 'quoted' $1";
  const std::int64_t beyond_a_double = (std::int64_t{1} << 53) + 1;  // Exact as a number only.
  const Rows rows =
      c->query("SELECT typeof($1), $1 + 1, typeof($2), $2, $3 IS NULL",
               {beyond_a_double, Param::borrowed(std::string_view(text).substr(0, 8)), Param()});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].text(0), "integer");
  EXPECT_EQ(rows[0].integer(1), beyond_a_double + 1);
  EXPECT_EQ(rows[0].text(2), "text");
  EXPECT_EQ(rows[0].text(3), "borrowed") << "a view's own length, not up to a NUL";
  EXPECT_EQ(rows[0].integer(4), 1);
}

TEST(SqliteConnection, AStatementIsFoundByItsTextWhereverItLies) {
  const test::TempDir dir("tollgate-store-test");
  auto c = connect({Engine::Sqlite, dir.file("t.db")});
  // One buffer, two statements of one length: the second lies where the first did.
  std::string sql = "SELECT 'first ' || $1";
  const char* where = sql.data();
  EXPECT_EQ(c->query(sql, {"run"}).at(0).text(0), "first run");
  sql = "SELECT 'other ' || $1";
  ASSERT_EQ(sql.data(), where);
  EXPECT_EQ(c->query(sql, {"run"}).at(0).text(0), "other run");
  sql = "SELECT 'first ' || $1";
  EXPECT_EQ(c->query(sql, {"again"}).at(0).text(0), "first again");
  // The same text from another place is the same statement.
  EXPECT_EQ(c->query(std::string("SELECT 'other ' || $1"), {"copy"}).at(0).text(0), "other copy");
}

TEST(SqliteConnection, SqliteKeepsNoProcessWideCountOfItsMemory) {
  // The count takes a lock of the whole process around each of SQLite's allocations.
  const test::TempDir dir("tollgate-store-test");
  auto c = connect({Engine::Sqlite, dir.file("t.db")});
  c->script("CREATE TABLE t (v TEXT)");
  c->query("INSERT INTO t (v) VALUES ($1)", {std::string(10'000, 'v')});
  EXPECT_EQ(sqlite3_memory_used(), 0);
}

}  // namespace
}  // namespace tollgate::store

namespace tollgate::store {
namespace {

TEST(Migrations, SevenKeepsInvitationsWhoseMakerStaysAndRevokesTheOthers) {
  const test::TempDir dir("tollgate-store-test");
  auto c = storeAt(dir, 6);
  const std::int64_t later = nowMs() + 3'600'000;
  c->script(
      "INSERT INTO teams (id, name, state, created_at) VALUES ('t', 'crew', 'active', 0);"
      "INSERT INTO users (id, email, name, created_at) VALUES ('u-stay', 'stay@x.io', '', 0),"
      " ('u-gone', 'gone@x.io', '', 0);"
      "INSERT INTO members (team_id, user_id, role, created_at) VALUES ('t', 'u-stay', 'admin', "
      "0);");
  for (const char* id : {"i-stay", "i-gone", "i-operator"}) {
    c->query(
        "INSERT INTO invites (id, team_id, role, token_hash, created_at, expires_at) VALUES ($1, "
        "'t', 'member', $1, 0, $2)",
        {id, later});
  }
  c->script(
      "INSERT INTO audit_log (id, at, actor, team_id, action, target, source) VALUES"
      " ('a1', 0, 'stay@x.io', 't', 'invitation.created', 'i-stay (member, open)', 'x'),"
      " ('a2', 0, 'gone@x.io', 't', 'invitation.created', 'i-gone (member, open)', 'x'),"
      " ('a3', 0, 'operator', 't', 'invitation.created', 'i-operator (member, open)', 'cli');");
  migrate(*c);
  const Rows rows =
      c->query("SELECT id, created_by, revoked_at IS NOT NULL FROM invites ORDER BY id");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].text(0), "i-gone");
  EXPECT_EQ(rows[0].text(1), "u-gone");
  EXPECT_EQ(rows[0].integer(2), 1) << "its maker left the team";
  EXPECT_EQ(rows[1].text(0), "i-operator");
  EXPECT_FALSE(rows[1].optionalText(1));
  EXPECT_EQ(rows[1].integer(2), 0);
  EXPECT_EQ(rows[2].text(0), "i-stay");
  EXPECT_EQ(rows[2].text(1), "u-stay");
  EXPECT_EQ(rows[2].integer(2), 0);
  EXPECT_EQ(c->query("SELECT 1 FROM audit_log WHERE actor = 'migration' AND action = "
                     "'invitation.revoked' AND target LIKE 'i-gone %'")
                .size(),
            1u);
}

}  // namespace
}  // namespace tollgate::store
