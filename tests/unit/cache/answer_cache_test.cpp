// The inference cache's front: bounded in bytes (the least recently used go first, one answer
// never more than an eighth of it), per team, filtered by age and retention, and backed by the
// store through the StoreWork port (reads of what it lacks, writes posted).
#include "cache/answer_cache.hpp"

#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>

namespace tollgate::cache {
namespace {

namespace asio = boost::asio;

store::CacheEntry entry(std::string team, std::string key, std::size_t bytes,
                        std::int64_t created_at = 1000) {
  return {std::move(team), std::move(key), "chat", created_at, 3, 4, std::string(bytes, 'x'), {}};
}

/// Runs `find` on an event loop of its own.
std::vector<std::optional<store::CacheEntry>> findNow(AnswerCache& cache, std::string team,
                                                      std::vector<std::string> keys,
                                                      std::int64_t not_before = 0) {
  std::vector<std::optional<store::CacheEntry>> found;
  asio::io_context ioc;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        found = co_await cache.find(std::move(team), std::move(keys), not_before);
      },
      asio::detached);
  ioc.run();
  return found;
}

TEST(AnswerCache, StaysWithinItsBytesWhileManyLargeAnswersAreWritten) {
  constexpr std::int64_t kCap = 1 << 20;
  AnswerCache cache({kCap, 0}, nullptr);
  for (int i = 0; i < 1000; ++i) {
    cache.put(entry("t", "k" + std::to_string(i), 100'000));
    ASSERT_LE(cache.memoryBytes(), kCap);
  }
  // The newest are kept, the oldest gone.
  EXPECT_TRUE(findNow(cache, "t", {"k999"}).front());
  EXPECT_FALSE(findNow(cache, "t", {"k0"}).front());
}

TEST(AnswerCache, AnAnswerOverAnEighthOfTheFrontIsNotKeptInMemory) {
  AnswerCache cache({8000, 0}, nullptr);
  cache.put(entry("t", "big", 2000));
  EXPECT_EQ(cache.memoryBytes(), 0);
  EXPECT_FALSE(findNow(cache, "t", {"big"}).front());
}

TEST(AnswerCache, TheLeastRecentlyUsedGoesFirst) {
  // Room for eight entries of this size (each an eighth of the front).
  cache::AnswerCache probe({1 << 20, 0}, nullptr);
  probe.put(entry("t", "k0", 100));
  const std::int64_t each = probe.memoryBytes();
  AnswerCache cache({8 * each, 0}, nullptr);
  for (int i = 0; i < 8; ++i) {
    cache.put(entry("t", "k" + std::to_string(i), 100));
  }
  EXPECT_TRUE(findNow(cache, "t", {"k0"}).front());  // k0 is now the most recently used
  cache.put(entry("t", "k8", 100));
  EXPECT_TRUE(findNow(cache, "t", {"k0"}).front());
  EXPECT_FALSE(findNow(cache, "t", {"k1"}).front());
  EXPECT_TRUE(findNow(cache, "t", {"k8"}).front());
}

TEST(AnswerCache, ATeamNeverFindsAnothersEntry) {
  AnswerCache cache({1 << 20, 0}, nullptr);
  cache.put(entry("a", "k", 10));
  EXPECT_TRUE(findNow(cache, "a", {"k"}).front());
  EXPECT_FALSE(findNow(cache, "b", {"k"}).front());
}

TEST(AnswerCache, AnEntryOlderThanNotBeforeIsAMiss) {
  AnswerCache cache({1 << 20, 0}, nullptr);
  cache.put(entry("t", "k", 10, 1000));
  EXPECT_TRUE(findNow(cache, "t", {"k"}, 1000).front());
  EXPECT_FALSE(findNow(cache, "t", {"k"}, 1001).front());
}

TEST(AnswerCache, AnEntryPastTheRetentionIsAMissWhateverTheReadAsks) {
  constexpr std::int64_t kRetentionMs = 60'000;
  AnswerCache cache({1 << 20, 0, kRetentionMs}, nullptr);
  const std::int64_t now = store::nowMs();
  cache.put(entry("t", "old", 10, now - kRetentionMs - 1000));
  cache.put(entry("t", "new", 10, now - kRetentionMs + 10'000));
  EXPECT_FALSE(findNow(cache, "t", {"old"}, 0).front()) << "still in memory, yet past retention";
  EXPECT_TRUE(findNow(cache, "t", {"new"}, 0).front());
}

/// A store in memory behind the port: what was posted, and entries to find.
class MemoryWork final : public store::StoreWork {
 public:
  asio::awaitable<bool> run(Task) override {
    ++runs;
    co_return false;  // The store failed: a miss.
  }
  void post(Task task) override { posted.push_back(std::move(task)); }
  int runs = 0;
  std::vector<Task> posted;
};

TEST(AnswerCache, WritesArePostedOnceUntilTakenAndAStoreFailureIsAMiss) {
  MemoryWork work;
  AnswerCache cache({1 << 20, 0}, &work);
  cache.put(entry("t", "a", 10));
  cache.put(entry("t", "b", 10));
  EXPECT_EQ(work.posted.size(), 1u) << "one flush for what is pending";
  EXPECT_TRUE(findNow(cache, "t", {"a"}).front());
  EXPECT_EQ(work.runs, 0) << "the front had it: no store round trip";
  EXPECT_FALSE(findNow(cache, "t", {"z"}).front());
  EXPECT_EQ(work.runs, 1);
}

}  // namespace
}  // namespace tollgate::cache
