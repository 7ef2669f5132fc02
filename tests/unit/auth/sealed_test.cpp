// Sealed values: what seal() makes opens with the same secret and purpose, and nothing else
// does (an altered byte, another purpose or secret, garbage); two seals of one text differ.
#include "auth/sealed.hpp"

#include <gtest/gtest.h>

namespace tollgate::auth {
namespace {

constexpr std::string_view kSecret = "a server secret of at least 32 characters";

TEST(Sealer, OpensWhatItSealedAndNothingElse) {
  const Sealer s(kSecret, "oidc-login");
  const std::string text = "state\nnonce\nverifier\n/console/\n1700000000000";
  const std::string sealed = s.seal(text);
  EXPECT_EQ(s.open(sealed), text);
  EXPECT_EQ(sealed.find("nonce"), std::string::npos);
  EXPECT_NE(s.seal(text), sealed) << "a fresh nonce each time";
  EXPECT_EQ(s.open(s.seal("")), "");
  for (std::size_t i = 0; i < sealed.size(); i += 7) {
    std::string altered = sealed;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    EXPECT_FALSE(s.open(altered)) << i;
  }
  EXPECT_FALSE(Sealer(kSecret, "another purpose").open(sealed));
  EXPECT_FALSE(Sealer("another server secret, also 32 characters", "oidc-login").open(sealed));
  for (const char* junk : {"", "AAAA", "not base64url!", "=="}) {
    EXPECT_FALSE(s.open(junk)) << junk;
  }
  EXPECT_FALSE(s.open(sealed.substr(0, sealed.size() - 2)));
  EXPECT_FALSE(s.open(std::string(9000, 'A'))) << "too long to be ours";
}

}  // namespace
}  // namespace tollgate::auth
