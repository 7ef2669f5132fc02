#include "core/spool.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace tollgate {
namespace {

/// `n` bytes of every value, distinct at nearby offsets.
std::string pattern(std::size_t n, std::size_t seed = 0) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = static_cast<char>((i + seed) * 31 % 256);
  }
  return out;
}

/// Everything `s` holds, read back in pieces of `piece` bytes.
std::string readAll(const Spool& s, std::size_t piece) {
  std::string out;
  std::string buffer(piece, '\0');
  for (std::size_t offset = 0;;) {
    const auto n = s.read(offset, buffer);
    EXPECT_TRUE(n.ok());
    if (!n.ok() || *n == 0) {
      return out;
    }
    out.append(buffer.data(), *n);
    offset += *n;
  }
}

/// The `size` bytes at `offset`, read at once.
std::string readAt(const Spool& s, std::size_t offset, std::size_t size) {
  std::string out(size, '\0');
  const auto n = s.read(offset, out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? *n : 0);
  return out;
}

TEST(Spool, StartsEmptyInMemory) {
  const Spool s;
  EXPECT_EQ(s.size(), 0u);
  EXPECT_FALSE(s.inFile());
  EXPECT_EQ(readAt(s, 0, 8), "");
}

TEST(Spool, StaysInMemoryUpToTheLimit) {
  Spool s;
  s.limitMemory(10);
  ASSERT_TRUE(s.append("hello"));
  ASSERT_TRUE(s.append("world"));  // exactly 10
  EXPECT_FALSE(s.inFile());
  EXPECT_EQ(s.size(), 10u);
  EXPECT_EQ(s.memory(), "helloworld");
  EXPECT_EQ(readAt(s, 0, 10), "helloworld");
}

TEST(Spool, WithoutALimitNeverMovesToAFile) {
  Spool s;
  const std::string big = pattern(1 << 20);
  ASSERT_TRUE(s.append(big));
  EXPECT_FALSE(s.inFile());
  EXPECT_EQ(s.memory(), big);
}

TEST(Spool, MovesToAFilePastTheLimit) {
  Spool s;
  s.limitMemory(10);
  ASSERT_TRUE(s.append("helloworld"));
  ASSERT_TRUE(s.append("!"));
  EXPECT_TRUE(s.inFile());
  EXPECT_EQ(s.size(), 11u);
  EXPECT_TRUE(s.memory().empty());
  EXPECT_EQ(readAt(s, 0, 11), "helloworld!");
}

TEST(Spool, OneAppendLargerThanTheLimitGoesToAFile) {
  Spool s;
  s.limitMemory(4);
  ASSERT_TRUE(s.append("0123456789"));
  EXPECT_TRUE(s.inFile());
  EXPECT_EQ(readAt(s, 0, 100), "0123456789");
}

TEST(Spool, ReadsTheExactBytesAtAnyOffsetEitherSideOfTheSwitch) {
  const std::string content = pattern(5000);
  for (const std::size_t limit : {std::size_t{100'000}, std::size_t{1000}, std::size_t{0}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    Spool s;
    s.limitMemory(limit);
    // Uneven appends, so the switch happens inside one of them.
    for (std::size_t at = 0, step = 1; at < content.size(); at += step, step = step * 3 % 997 + 1) {
      ASSERT_TRUE(s.append(std::string_view(content).substr(at, step)));
    }
    EXPECT_EQ(s.inFile(), limit < content.size());
    EXPECT_EQ(s.size(), content.size());
    for (const std::size_t offset : {0, 1, 999, 1000, 1001, 2047, 4999}) {
      for (const std::size_t size : {1, 2, 7, 1000, 6000}) {
        EXPECT_EQ(readAt(s, offset, size), content.substr(offset, size))
            << "offset " << offset << " size " << size;
      }
    }
    for (const std::size_t piece : {1, 13, 4096, 10'000}) {
      EXPECT_EQ(readAll(s, piece), content) << "pieces of " << piece;
    }
  }
}

TEST(Spool, ReadingAtOrPastTheEndReadsNothing) {
  for (const std::size_t limit : {std::size_t{100}, std::size_t{2}}) {
    Spool s;
    s.limitMemory(limit);
    ASSERT_TRUE(s.append("abcd"));
    std::string out(8, 'x');
    EXPECT_EQ(*s.read(4, out), 0u) << limit;
    EXPECT_EQ(*s.read(5, out), 0u) << limit;
    EXPECT_EQ(*s.read(1'000'000, out), 0u) << limit;
    EXPECT_EQ(out, std::string(8, 'x')) << limit;
    EXPECT_EQ(*s.read(3, out), 1u) << limit;
    EXPECT_EQ(out[0], 'd') << limit;
  }
}

// A read into an empty buffer reads 0 bytes, in memory and in a file (where pread's 0 must not be
// taken for a failure).
TEST(Spool, AnEmptyBufferReadsNothing) {
  for (const std::size_t limit : {std::size_t{100}, std::size_t{2}}) {
    Spool s;
    s.limitMemory(limit);
    ASSERT_TRUE(s.append("abcd"));
    const auto n = s.read(1, std::span<char>());
    ASSERT_TRUE(n.ok()) << "limit " << limit << ": " << n.error().message;
    EXPECT_EQ(*n, 0u) << limit;
  }
}

TEST(Spool, ClearMakesItEmptyAndInMemoryAgain) {
  Spool s;
  s.limitMemory(4);
  ASSERT_TRUE(s.append("0123456789"));
  ASSERT_TRUE(s.inFile());
  s.clear();
  EXPECT_EQ(s.size(), 0u);
  EXPECT_FALSE(s.inFile());
  EXPECT_EQ(readAt(s, 0, 4), "");
  // The limit still holds after clear().
  ASSERT_TRUE(s.append("abc"));
  EXPECT_FALSE(s.inFile());
  EXPECT_EQ(s.memory(), "abc");
  ASSERT_TRUE(s.append("de"));
  EXPECT_TRUE(s.inFile());
  EXPECT_EQ(readAt(s, 0, 10), "abcde");
}

TEST(Spool, MoveConstructionTakesTheContent) {
  for (const std::size_t limit : {std::size_t{100}, std::size_t{4}}) {
    SCOPED_TRACE("limit " + std::to_string(limit));
    Spool a;
    a.limitMemory(limit);
    ASSERT_TRUE(a.append("0123456789"));
    const bool in_file = a.inFile();
    Spool b(std::move(a));
    EXPECT_EQ(b.size(), 10u);
    EXPECT_EQ(b.inFile(), in_file);
    EXPECT_EQ(readAt(b, 0, 10), "0123456789");
    EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is defined
    EXPECT_FALSE(a.inFile());
    EXPECT_EQ(readAt(a, 0, 10), "");
    // The limit moves with the content.
    ASSERT_TRUE(b.append("x"));
    EXPECT_EQ(b.inFile(), limit < 11);
    EXPECT_EQ(readAt(b, 0, 11), "0123456789x");
  }
}

TEST(Spool, MoveAssignmentReplacesTheContent) {
  Spool a;
  a.limitMemory(4);
  ASSERT_TRUE(a.append("0123456789"));
  Spool b;
  b.limitMemory(2);
  ASSERT_TRUE(b.append("old content"));
  ASSERT_TRUE(b.inFile());
  b = std::move(a);
  EXPECT_TRUE(b.inFile());
  EXPECT_EQ(readAt(b, 0, 20), "0123456789");
  EXPECT_EQ(a.size(), 0u);  // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(a.inFile());
}

}  // namespace
}  // namespace tollgate
