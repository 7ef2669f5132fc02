// The inference cache in a SQLite store: an entry is found again byte for byte while new enough,
// a newer one replaces it, teams never see each other's, a team over its cap loses its oldest
// entries first, and a cache hit's settlement (no hold) writes its row without touching balances.
#include <gtest/gtest.h>

#include "sqlite_store.hpp"

namespace tollgate::store {
namespace {

class CacheStore : public test::SqliteStoreTest {
 protected:
  CacheEntry entry(const std::string& key, std::int64_t created_at, std::string body,
                   const std::string& team_id = "") {
    return {team_id.empty() ? team_ : team_id, key, "chat", created_at, 7, 3, std::move(body), {}};
  }
  void put(std::vector<CacheEntry> entries, std::int64_t team_max_bytes = 0) {
    db_->putCacheEntries(entries, team_max_bytes);
  }
  /// The keys a team has cached, oldest first.
  std::vector<std::string> keys(const std::string& team_id) {
    std::vector<std::string> out;
    for (const Row& r : db_->connection().query(
             "SELECT key FROM inference_cache WHERE team_id = $1 ORDER BY created_at", {team_id})) {
      out.push_back(r.text(0));
    }
    return out;
  }
};

TEST_F(CacheStore, AnEntryIsFoundAgainByteForByte) {
  constexpr char kAnswer[] = "{\"x\":\"\0\xff\xc3(\"}";
  const std::string body(kAnswer, sizeof kAnswer - 1);
  ASSERT_NE(body.find('\0'), std::string::npos);
  put({entry("k", 1000, body)});
  const std::optional<CacheEntry> found = db_->findCacheEntry(team_, "k", 0);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->team_id, team_);
  EXPECT_EQ(found->key, "k");
  EXPECT_EQ(found->endpoint, "chat");
  EXPECT_EQ(found->created_at, 1000);
  EXPECT_EQ(found->prompt_tokens, 7);
  EXPECT_EQ(found->completion_tokens, 3);
  EXPECT_EQ(found->body, body);
  const Rows bytes = db_->connection().query("SELECT bytes FROM inference_cache");
  EXPECT_EQ(bytes.at(0).integer(0), static_cast<std::int64_t>(body.size()));
  EXPECT_FALSE(db_->findCacheEntry(team_, "other", 0));
}

TEST_F(CacheStore, OnlyAnEntryCreatedAtOrAfterNotBeforeIsFound) {
  put({entry("k", 1000, "a")});
  EXPECT_TRUE(db_->findCacheEntry(team_, "k", 1000));
  EXPECT_FALSE(db_->findCacheEntry(team_, "k", 1001));
}

TEST_F(CacheStore, ANewerEntryReplacesAnOlderOneNot) {
  put({entry("k", 1000, "first")});
  put({entry("k", 2000, "second")});
  EXPECT_EQ(db_->findCacheEntry(team_, "k", 0)->body, "second");
  put({entry("k", 1500, "late")});
  EXPECT_EQ(db_->findCacheEntry(team_, "k", 0)->body, "second");
  put({entry("k", 3000, "third"), entry("k", 2500, "older in the same batch")});
  EXPECT_EQ(db_->findCacheEntry(team_, "k", 0)->body, "third");
  EXPECT_EQ(keys(team_).size(), 1u);
}

TEST_F(CacheStore, TeamsNeverSeeEachOthersEntries) {
  const std::string other = db_->createTeam("other").id;
  put({entry("k", 1000, "acme's"), entry("k", 1000, "other's", other)});
  EXPECT_EQ(db_->findCacheEntry(team_, "k", 0)->body, "acme's");
  EXPECT_EQ(db_->findCacheEntry(other, "k", 0)->body, "other's");
  put({entry("only-acme", 1000, "x")});
  EXPECT_FALSE(db_->findCacheEntry(other, "only-acme", 0));
}

TEST_F(CacheStore, ATeamOverItsCapLosesItsOldestEntriesFirst) {
  const std::string other = db_->createTeam("other").id;
  const std::string ten(10, 'x');
  put({entry("o1", 1, ten, other), entry("o2", 2, ten, other), entry("o3", 3, ten, other)});
  put({entry("a3", 3, ten), entry("a1", 1, ten), entry("a2", 2, ten)});
  EXPECT_EQ(keys(team_), (std::vector<std::string>{"a1", "a2", "a3"})) << "no cap";

  put({entry("a4", 4, ten), entry("a5", 5, ten)}, 25);
  EXPECT_EQ(keys(team_), (std::vector<std::string>{"a4", "a5"}));
  EXPECT_EQ(keys(other).size(), 3u) << "only the teams written are evicted";

  put({entry("a6", 6, std::string(5, 'y'))}, 25);
  EXPECT_EQ(keys(team_), (std::vector<std::string>{"a4", "a5", "a6"})) << "exactly at the cap";
  put({entry("big", 7, std::string(30, 'z'))}, 25);
  EXPECT_TRUE(keys(team_).empty()) << "one entry above the cap is not kept either";
}

TEST_F(CacheStore, PruneForgetsEntriesCreatedBefore) {
  const std::string other = db_->createTeam("other").id;
  put({entry("a1", 100, "x"), entry("a2", 300, "x"), entry("o1", 200, "x", other)});
  EXPECT_EQ(db_->pruneCache(250), 2);
  EXPECT_EQ(db_->pruneCache(250), 0);
  EXPECT_EQ(keys(team_), std::vector<std::string>{"a2"});
  EXPECT_TRUE(keys(other).empty());
}

TEST_F(CacheStore, ASettlementWithoutAHoldWritesItsRowAndLeavesBalancesAlone) {
  db_->topUp(team_, 100);
  ASSERT_TRUE(db_->hold({"h1", team_, 10}, "gw", 0, 0, false).held);
  SpendRow hit;
  hit.request_id = "req-hit";
  hit.created_at = 1000;
  hit.team_id = team_;
  hit.endpoint = "chat";
  hit.model = "m";
  hit.cache_hit = true;
  SpendRow billed = hit;
  billed.request_id = "req-billed";
  billed.cache_hit = false;
  billed.cost = 4;
  std::vector<Settlement> batch{{"", hit, true}, {"h1", billed, true}};
  EXPECT_EQ(db_->settle(batch),
            (std::vector<SettleOutcome>{SettleOutcome::Kept, SettleOutcome::Kept}));
  EXPECT_EQ(balanceAndReserved(team_), std::make_pair(std::int64_t{96}, std::int64_t{6}));
  const std::vector<SpendRow> rows = db_->listSpend({.team_id = team_});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].request_id, "req-billed");
  EXPECT_EQ(rows[1].request_id, "req-hit");
  EXPECT_EQ(rows[1].cost, 0);
  EXPECT_TRUE(rows[1].cache_hit);
  EXPECT_EQ(db_->summarizeSpend(team_, SpendGroup::Day, "1970-01-01").at(0).requests, 2);

  // Alone in its batch, and priced by mistake: nothing held, nothing debited, the row says so.
  hit.request_id = "req-hit-2";
  hit.cost = 3;
  Settlement alone{"", hit, true};
  EXPECT_EQ(db_->settle(std::span(&alone, 1)).at(0), SettleOutcome::Kept);
  EXPECT_EQ(balanceAndReserved(team_), std::make_pair(std::int64_t{96}, std::int64_t{6}));
  const std::vector<SpendRow> after = db_->listSpend({.team_id = team_, .model = "m"});
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after[2].request_id, "req-hit-2");
  EXPECT_EQ(after[2].cost, 0);
  EXPECT_EQ(after[2].uncollected, 3);
}

}  // namespace
}  // namespace tollgate::store
