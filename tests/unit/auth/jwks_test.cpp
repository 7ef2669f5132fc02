#include "auth/jwks.hpp"

#include <gtest/gtest.h>

#include "jose_signer.hpp"

namespace tollgate::auth {
namespace {

using test::jwksOf;
using test::TestKey;
using test::withMembers;

/// The keys of the tests, made once: RSA ones take a while.
struct Keys {
  TestKey rsa_a = TestKey::rsa("a");
  TestKey rsa_b = TestKey::rsa("b");
  TestKey rsa_small = TestKey::rsa("small", 1024);
  TestKey ec = TestKey::ec("e");
  TestKey ec_good = TestKey::ec("good");
  TestKey p384 = TestKey::ec("p384", CJOSE_JWK_EC_P_384);
};

const Keys& keys() {
  static const Keys* k = new Keys();
  return *k;
}

/// The message of a refused JWKS, or "" when it was accepted.
std::string refusal(const std::string& json) {
  auto jwks = parseJwks(json);
  return jwks.ok() ? "" : jwks.error();
}

/// `jwk` (RSA, e = 65537) with an exponent of 73 bits.
std::string bigExponent(std::string jwk) {
  const std::string e = R"("e":"AQAB")";
  const std::size_t at = jwk.find(e);
  EXPECT_NE(at, std::string::npos) << jwk;
  return at == std::string::npos ? jwk : jwk.replace(at, e.size(), R"("e":"AQAAAAAAAAAAAQ")");
}

TEST(Jwks, KeepsPublicSigningKeysAndFindsThemByKid) {
  const Keys& k = keys();
  auto jwks = parseJwks(jwksOf({k.rsa_a.json(), k.rsa_b.json(), k.ec.json()}));
  ASSERT_TRUE(jwks.ok()) << jwks.error();
  EXPECT_EQ(jwks->size(), 3u);
  const cjose_jwk_t* a = jwks->find("a", JwsAlg::Rs256);
  const cjose_jwk_t* b = jwks->find("b", JwsAlg::Rs256);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  EXPECT_NE(jwks->find("e", JwsAlg::Es256), nullptr);
  EXPECT_EQ(jwks->find("c", JwsAlg::Rs256), nullptr);
  EXPECT_EQ(jwks->find("a", JwsAlg::Es256), nullptr) << "an RSA key never serves ES256";
  EXPECT_EQ(jwks->find("e", JwsAlg::Rs256), nullptr) << "an EC key never serves RS256";
}

TEST(Jwks, WithoutAKidTakesTheOnlyKeyOfTheType) {
  const Keys& k = keys();
  auto one = parseJwks(jwksOf({k.rsa_a.json(), k.ec.json()}));
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ(one->find(std::nullopt, JwsAlg::Rs256), one->find("a", JwsAlg::Rs256));
  EXPECT_EQ(one->find(std::nullopt, JwsAlg::Es256), one->find("e", JwsAlg::Es256));
  auto two = parseJwks(jwksOf({k.rsa_a.json(), k.rsa_b.json()}));
  ASSERT_TRUE(two.ok()) << two.error();
  EXPECT_EQ(two->find(std::nullopt, JwsAlg::Rs256), nullptr) << "two RSA keys: which?";
}

TEST(Jwks, KeyWithoutKidIsFoundOnlyWithoutOne) {
  std::string jwk = keys().rsa_a.json();
  const std::string kid = R"("kid":"a",)";
  ASSERT_NE(jwk.find(kid), std::string::npos) << jwk;
  jwk.erase(jwk.find(kid), kid.size());
  auto jwks = parseJwks(jwksOf({jwk}));
  ASSERT_TRUE(jwks.ok()) << jwks.error();
  EXPECT_NE(jwks->find(std::nullopt, JwsAlg::Rs256), nullptr);
  EXPECT_EQ(jwks->find("a", JwsAlg::Rs256), nullptr);
}

TEST(Jwks, SkipsKeysThatAreNotPublicSigningKeysOfRs256OrEs256) {
  const Keys& k = keys();
  const std::string good = k.ec_good.json();
  struct Skipped {
    const char* why;
    std::string jwk;
    const char* kid;
    JwsAlg alg;
  };
  const Skipped cases[] = {
      {"private RSA key", k.rsa_a.json(true), "a", JwsAlg::Rs256},
      {"private EC key", k.ec.json(true), "e", JwsAlg::Es256},
      {"1024-bit RSA", k.rsa_small.json(), "small", JwsAlg::Rs256},
      {"P-384", k.p384.json(), "p384", JwsAlg::Es256},
      {"73-bit exponent", bigExponent(k.rsa_b.json()), "b", JwsAlg::Rs256},
      {"use enc", withMembers(k.rsa_b.json(), {{"use", R"("enc")"}}), "b", JwsAlg::Rs256},
      {"alg RS512", withMembers(k.rsa_b.json(), {{"alg", R"("RS512")"}}), "b", JwsAlg::Rs256},
      {"alg ES256 on RSA", withMembers(k.rsa_b.json(), {{"alg", R"("ES256")"}}), "b",
       JwsAlg::Rs256},
      {"oct", R"({"kty":"oct","kid":"o","k":"c2VjcmV0"})", "o", JwsAlg::Rs256},
      {"kid not a string", R"({"kty":"EC","kid":7,"crv":"P-256","x":"","y":""})", "7",
       JwsAlg::Es256},
      {"not an object", R"("key")", "", JwsAlg::Rs256},
  };
  for (const Skipped& c : cases) {
    auto with_good = parseJwks(jwksOf({c.jwk, good}));
    ASSERT_TRUE(with_good.ok()) << c.why << ": " << with_good.error();
    EXPECT_EQ(with_good->size(), 1u) << c.why;
    EXPECT_EQ(with_good->find(c.kid, c.alg), nullptr) << c.why;
    EXPECT_NE(refusal(jwksOf({c.jwk})), "") << c.why << " alone is no usable key";
  }
  EXPECT_TRUE(
      parseJwks(jwksOf({withMembers(k.rsa_b.json(), {{"use", R"("sig")"}, {"alg", R"("RS256")"}})}))
          .ok());
}

TEST(Jwks, SaysWhyNoKeyIsUsable) {
  const Keys& k = keys();
  const std::string message = refusal(jwksOf({k.rsa_a.json(true), k.rsa_small.json()}));
  EXPECT_NE(message.find("no usable signing key"), std::string::npos) << message;
  EXPECT_NE(message.find(R"(key 0 (kid "a"): carries the private member "d")"), std::string::npos)
      << message;
  EXPECT_NE(message.find("1024 bits"), std::string::npos) << message;
}

TEST(Jwks, KeepsTheFirstKeyOfARepeatedKid) {
  const Keys& k = keys();
  std::string other = k.rsa_b.json();
  other.replace(other.find(R"("kid":"b")"), 9, R"("kid":"a")");
  auto jwks = parseJwks(jwksOf({k.rsa_a.json(), other}));
  ASSERT_TRUE(jwks.ok()) << jwks.error();
  EXPECT_EQ(jwks->size(), 1u);
}

TEST(Jwks, KeepsAtMost32Keys) {
  std::vector<std::string> many;
  std::string jwk = keys().ec.json();
  const std::size_t at = jwk.find(R"("kid":"e")");
  for (int i = 0; i < 40; ++i) {
    std::string copy = jwk;
    copy.replace(at, 9, "\"kid\":\"e" + std::to_string(i) + "\"");
    many.push_back(copy);
  }
  auto jwks = parseJwks(jwksOf(many));
  ASSERT_TRUE(jwks.ok()) << jwks.error();
  EXPECT_EQ(jwks->size(), kMaxJwksKeys);
  EXPECT_NE(jwks->find("e31", JwsAlg::Es256), nullptr);
  EXPECT_EQ(jwks->find("e32", JwsAlg::Es256), nullptr);
}

TEST(Jwks, RefusesWhatIsNotAJwks) {
  const std::string good = keys().ec.json();
  EXPECT_NE(refusal("not json"), "");
  EXPECT_NE(refusal("[]"), "");
  EXPECT_NE(refusal(R"({"keys":{}})"), "");
  EXPECT_NE(refusal(R"({"keys":[]})"), "");
  EXPECT_NE(refusal(R"({"keys":[)" + good + R"(],"keys":[]})").find("duplicate key"),
            std::string::npos);
  EXPECT_NE(refusal(jwksOf({withMembers(good, {{"use", R"("sig")"}, {"use", R"("enc")"}})}))
                .find("duplicate key"),
            std::string::npos);
  const std::string padded = jwksOf({good}) + std::string(kMaxJwksBytes, ' ');
  EXPECT_NE(refusal(padded).find("larger than"), std::string::npos);
}

TEST(Jwks, RefusesCoordinatesAndModuliThatAreNotCanonicalBase64url) {
  std::string jwk = keys().ec.json();
  const std::size_t x = jwk.find(R"("x":")") + 5;
  std::string padded = jwk;
  padded.insert(jwk.find('"', x), "=");
  EXPECT_NE(refusal(jwksOf({padded})), "");
  std::string off_curve = jwk;
  off_curve[x + 3] = off_curve[x + 3] == 'A' ? 'B' : 'A';
  EXPECT_NE(refusal(jwksOf({off_curve})).find("cjose"), std::string::npos);
}

}  // namespace
}  // namespace tollgate::auth
