#include "core/ids.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace tollgate::ids {
namespace {

TEST(UnguessableHex, IsTwoLowerCaseHexDigitsAByteAndNeverTheSameTwice) {
  EXPECT_EQ(unguessableHex(0), "");
  const std::string a = unguessableHex(16);
  ASSERT_EQ(a.size(), 32U);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_NE(unguessableHex(16), a);
  EXPECT_EQ(unguessableHex(300).size(), 600U);  // More than one read may be needed.
}

TEST(UuidV7, IsCanonicalVersion7AndVariant) {
  const std::string id = uuidV7();
  ASSERT_TRUE(isUuid(id)) << id;
  EXPECT_EQ(id[14], '7');
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
  EXPECT_NE(uuidV7(), id);
}

TEST(UuidV7, BeginsWithTheMillisecondItWasMadeInAndEachByteIsTwoDigits) {
  const auto now = [] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  const std::int64_t before = now();
  const std::string id = uuidV7();
  const std::int64_t after = now();
  const std::int64_t made = std::stoll(id.substr(0, 8) + id.substr(9, 4), nullptr, 16);
  EXPECT_GE(made, before) << id;
  // A thread's ids never go back: a burst of them just before may run a little ahead of the clock.
  EXPECT_LE(made, after + 1'000) << id;
  for (const std::size_t dash : {8, 13, 18, 23}) {
    EXPECT_EQ(id[dash], '-') << id;
  }
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef-"), std::string::npos) << id;
}

TEST(UuidV7, IsTimeOrdered) {
  const std::string a = uuidV7();
  const std::string b = uuidV7();
  EXPECT_LE(a.substr(0, 13), b.substr(0, 13));
}

TEST(UuidV7, IdsMadeOneAfterAnotherSortInThatOrderWithinAMillisecond) {
  std::string last = uuidV7();
  for (int i = 0; i < 10'000; ++i) {  // Many to a millisecond, past the counter's 4096.
    const std::string next = uuidV7();
    ASSERT_LT(last, next) << i;
    last = next;
  }
}

TEST(IsUuid, AcceptsCanonicalFormsOnly) {
  EXPECT_TRUE(isUuid("0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b"));
  EXPECT_TRUE(isUuid("0190A0B2-7C3D-7E4F-8A9B-0C1D2E3F4A5B"));
  EXPECT_FALSE(isUuid(""));
  EXPECT_FALSE(isUuid("0190a0b27c3d7e4f8a9b0c1d2e3f4a5b"));
  EXPECT_FALSE(isUuid("0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5g"));
  EXPECT_FALSE(isUuid("0190a0b2-7c3d-7e4f-8a9b0-c1d2e3f4a5b"));
  EXPECT_FALSE(isUuid("{0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5}"));
}

}  // namespace
}  // namespace tollgate::ids
