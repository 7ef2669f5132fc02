#include "core/ids.hpp"

#include <gtest/gtest.h>

namespace tollgate::ids {
namespace {

TEST(UuidV7, IsCanonicalVersion7AndVariant) {
  const std::string id = uuidV7();
  ASSERT_TRUE(isUuid(id)) << id;
  EXPECT_EQ(id[14], '7');
  EXPECT_NE(std::string("89ab").find(id[19]), std::string::npos) << id;
  EXPECT_NE(uuidV7(), id);
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
