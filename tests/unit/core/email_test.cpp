#include "core/email.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tollgate::email {
namespace {

TEST(Email, NormalizesToLowerCase) {
  EXPECT_EQ(normalize("Ann.Lee+tag@Acme.IO"), "ann.lee+tag@acme.io");
  EXPECT_EQ(normalize("zoë@example.org"), "zoë@example.org");
}

TEST(Email, NonRoutableDomainsAreTheReservedOnesAndThoseWithoutADot) {
  for (const std::string local :
       {"owner@localhost", "a@localhost.", "a@intranet", "a@x.localhost", "a@box.local",
        "a@corp.internal", "a@x.invalid", "a@acme.test", "a@x.example"}) {
    EXPECT_TRUE(nonRoutable(local)) << local;
  }
  for (const std::string routable : {"a@example.com", "a@acme.example.com", "a@localhost.com",
                                     "a@test.io", "a@local.example.org", "a@x.testing"}) {
    EXPECT_FALSE(nonRoutable(routable)) << routable;
  }
}

TEST(Email, RefusesWhatIsNotShapedLikeAnAddress) {
  for (const std::string bad : {"", "ann", "@acme.io", "ann@", "a@b@c", "a b@x.io", "a\n@x.io",
                                "a\x7f@x.io", "a\xc2\x85@x.io", "a\xff@x.io"}) {
    EXPECT_FALSE(normalize(bad).has_value()) << bad;
  }
}

TEST(Email, IsAtMost254Bytes) {
  const std::string domain = "@x.io";
  EXPECT_TRUE(normalize(std::string(kMaxBytes - domain.size(), 'a') + domain).has_value());
  EXPECT_FALSE(normalize(std::string(kMaxBytes + 1 - domain.size(), 'a') + domain).has_value());
}

}  // namespace
}  // namespace tollgate::email
