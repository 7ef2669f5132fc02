// The spend log's token kinds on SQLite: written with each row, summed into every daily
// aggregate, read back by the listings and summaries; a cache entry keeps them for its hits.
#include <gtest/gtest.h>

#include <vector>

#include "sqlite_store.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::store {
namespace {

constexpr std::int64_t kDay = 86'400'000;

class SpendStore : public test::SqliteStoreTest {
 protected:
  /// A row of model `model` at `at` with the counts given, billed to the fixture's team and
  /// made for user `u1` with tag team=search (so that every aggregate counts it).
  SpendRow row(const std::string& id, const std::string& model, std::int64_t at,
               const TokenKinds& kinds) {
    SpendRow r;
    r.request_id = id;
    r.created_at = at;
    r.team_id = team_;
    r.endpoint = "chat";
    r.model = model;
    r.user_id = "u1";
    r.prompt_tokens = 1000;
    r.completion_tokens = 40;
    r.kinds = kinds;
    r.tags = {{"team", "search"}};
    r.tags_json = R"({"team":"search"})";
    return r;
  }

  /// Settles `rows` in one batch, each without a hold.
  void settle(const std::vector<SpendRow>& rows) {
    std::vector<Settlement> batch;
    for (const SpendRow& r : rows) {
      batch.push_back({"", r, true});
    }
    db_->settle(batch);
  }
};

const TokenKinds kCached{.cached_tokens = 800, .reasoning_tokens = 30};
const TokenKinds kWritten{.cached_tokens = 100,
                          .cache_write_tokens = 300,
                          .cache_write_1h_tokens = 200,
                          .audio_prompt_tokens = 50,
                          .reasoning_tokens = 10,
                          .audio_completion_tokens = 5};

TEST_F(SpendStore, ARowKeepsEachKindOfToken) {
  settle({row("r1", "m", 1000, kCached), row("r2", "m", 2000, kWritten)});
  const std::vector<SpendRow> rows = db_->listSpend({.team_id = team_});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].kinds, kCached);
  EXPECT_EQ(rows[1].kinds, kWritten);
  EXPECT_EQ(rows[1].prompt_tokens, 1000);
  EXPECT_EQ(rows[1].key_name, "") << "the columns before the kinds read as before";
}

TEST_F(SpendStore, EveryAggregateSumsTheKindsAcrossRowsAndBatches) {
  settle({row("r1", "m", 1000, kCached), row("r2", "m", 2000, kWritten)});
  settle({row("r3", "m", 3000, kCached), row("r4", "other", kDay + 1, kWritten)});
  TokenKinds m = kWritten;  // And kCached twice.
  m.cached_tokens += 2 * kCached.cached_tokens;
  m.reasoning_tokens += 2 * kCached.reasoning_tokens;
  const std::vector<SpendTotal> models = db_->summarizeSpend(team_, SpendGroup::Model, "");
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].group, "m");
  EXPECT_EQ(models[0].requests, 3);
  EXPECT_EQ(models[0].prompt_tokens, 3000);
  EXPECT_EQ(models[0].kinds, m);
  EXPECT_EQ(models[1].kinds, kWritten);
  const std::vector<SpendTotal> days = db_->summarizeSpend(team_, SpendGroup::Day, "");
  ASSERT_EQ(days.size(), 2u);
  EXPECT_EQ(days[0].kinds, m);
  for (const SpendGroup by : {SpendGroup::Tag, SpendGroup::User, SpendGroup::Key}) {
    const std::vector<SpendTotal> all = db_->summarizeSpend(team_, by, "");
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all[0].kinds.cached_tokens, 1800);
    EXPECT_EQ(all[0].kinds.cache_write_tokens, 600);
    EXPECT_EQ(all[0].kinds.reasoning_tokens, 80);
  }
}

TEST_F(SpendStore, ACacheEntryKeepsTheKindsItsHitsRecord) {
  const TokenKinds kinds{.cached_tokens = 800, .reasoning_tokens = 30};
  const CacheEntry entry{team_, "k", "chat", 1000, 1000, 40, "{}", kinds};
  db_->putCacheEntries(std::span(&entry, 1), 0);
  const auto found = db_->findCacheEntry(team_, "k", 0);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->kinds, kinds);
  const usage::Counts counts = countsOf(*found);
  EXPECT_EQ(counts.prompt_tokens, 1000);
  EXPECT_EQ(counts.completion_tokens, 40);
  EXPECT_EQ(counts.cached_tokens, 800);
  EXPECT_EQ(counts.reasoning_tokens, 30);
  EXPECT_EQ(kindsOf(counts), kinds);
}

TEST(TokenKinds, KindsThatDoNotFitTheirTotalsAreNotKept) {
  usage::Counts c = usage::of(100, 10);
  c.cached_tokens = 60;
  c.cache_write_tokens = 30;
  c.reasoning_tokens = 10;
  EXPECT_EQ(kindsOf(c),
            (TokenKinds{.cached_tokens = 60, .cache_write_tokens = 30, .reasoning_tokens = 10}));
  c.cached_tokens = 80;  // 80 read and 30 written of 100.
  EXPECT_EQ(kindsOf(c), TokenKinds{});
  c.cached_tokens = -1;
  EXPECT_EQ(kindsOf(c), TokenKinds{});
}

}  // namespace
}  // namespace tollgate::store
