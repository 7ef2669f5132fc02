#include "auth/pkce.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/base64.hpp"

namespace tollgate::auth {
namespace {

TEST(Pkce, ChallengeIsTheRfc7636Example) {
  // RFC 7636 Appendix B.
  EXPECT_EQ(codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

TEST(Pkce, VerifiersAre64UnreservedCharactersEachLikely) {
  std::set<char> used;
  std::set<std::string> seen;
  for (int i = 0; i < 400; ++i) {
    const std::string v = newCodeVerifier();
    ASSERT_EQ(v.size(), kCodeVerifierLength);
    used.insert(v.begin(), v.end());
    EXPECT_TRUE(seen.insert(v).second);
  }
  const std::string unreserved =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
  EXPECT_EQ(used, std::set<char>(unreserved.begin(), unreserved.end()));
}

TEST(Pkce, RandomTokensAreBase64urlOfTheirBytes) {
  const std::string a = randomToken(32);
  EXPECT_EQ(a.size(), 43u);
  const auto bytes = base64::decodeUrl(a);
  ASSERT_TRUE(bytes.has_value());
  EXPECT_EQ(bytes->size(), 32u);
  EXPECT_NE(randomToken(32), a);
}

}  // namespace
}  // namespace tollgate::auth
