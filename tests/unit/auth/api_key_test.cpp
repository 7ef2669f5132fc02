#include "auth/api_key.hpp"

#include <gtest/gtest.h>

#include <set>

namespace tollgate::auth {
namespace {

TEST(ApiKey, GeneratedKeysParseBackAndAreDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const NewKey k = generateKey();
    EXPECT_EQ(k.full, "sk-tollgate-" + k.public_id + "-" + k.secret);
    EXPECT_TRUE(isPublicId(k.public_id));
    EXPECT_EQ(k.secret.size(), kSecretLength);
    const ParsedKey p = parseKey(k.full);
    ASSERT_EQ(p.shape, KeyShape::Ok);
    EXPECT_EQ(p.public_id, k.public_id);
    EXPECT_EQ(p.secret, k.secret);
    EXPECT_TRUE(seen.insert(k.full).second);
  }
}

TEST(ApiKey, RandomBase62UsesEveryCharacterAndNothingElse) {
  const std::string s = randomBase62(20000);
  std::set<char> chars(s.begin(), s.end());
  EXPECT_EQ(chars.size(), 62u);
  for (const char c : chars) {
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << c;
  }
}

struct Shape {
  const char* name;
  std::string key;
  KeyShape shape;
};

class KeyShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(KeyShapes, AreClassified) { EXPECT_EQ(parseKey(GetParam().key).shape, GetParam().shape); }

const std::string kPub = "AbCdEf012345";
const std::string kSecret = "0123456789abcdefghijABCDEFGHIJxy";

INSTANTIATE_TEST_SUITE_P(
    All, KeyShapes,
    ::testing::Values(
        Shape{"ok", "sk-tollgate-" + kPub + "-" + kSecret, KeyShape::Ok},
        Shape{"empty", "", KeyShape::WrongPrefix},
        Shape{"openai_key", "sk-proj-" + kSecret, KeyShape::WrongPrefix},
        Shape{"upper_prefix", "SK-TOLLGATE-" + kPub + "-" + kSecret, KeyShape::WrongPrefix},
        Shape{"prefix_only", "sk-tollgate-", KeyShape::Malformed},
        Shape{"no_secret", "sk-tollgate-" + kPub, KeyShape::Malformed},
        Shape{"no_dash", "sk-tollgate-" + kPub + kSecret, KeyShape::Malformed},
        Shape{"short_public", "sk-tollgate-" + kPub.substr(1) + "-" + kSecret + "x",
              KeyShape::Malformed},
        Shape{"long_secret", "sk-tollgate-" + kPub + "-" + kSecret + "x", KeyShape::Malformed},
        Shape{"short_secret", "sk-tollgate-" + kPub + "-" + kSecret.substr(1), KeyShape::Malformed},
        Shape{"dash_in_secret",
              "sk-tollgate-" + kPub + "-" + kSecret.substr(1, 15) + "-" + kSecret.substr(16),
              KeyShape::Malformed},
        Shape{"space", "sk-tollgate-" + kPub + "-" + kSecret.substr(1) + " ", KeyShape::Malformed},
        Shape{"non_ascii", "sk-tollgate-" + kPub + "-" + kSecret.substr(2) + "\xc3\xa9",
              KeyShape::Malformed},
        Shape{"nul", "sk-tollgate-" + kPub + "-" + kSecret.substr(1) + std::string(1, '\0'),
              KeyShape::Malformed},
        // The characters just outside the three ranges of base62.
        Shape{"slash", "sk-tollgate-/" + kPub.substr(1) + "-" + kSecret, KeyShape::Malformed},
        Shape{"colon", "sk-tollgate-" + kPub + "-" + kSecret.substr(1) + ":", KeyShape::Malformed},
        Shape{"at", "sk-tollgate-@" + kPub.substr(1) + "-" + kSecret, KeyShape::Malformed},
        Shape{"bracket", "sk-tollgate-" + kPub + "-[" + kSecret.substr(1), KeyShape::Malformed},
        Shape{"backtick", "sk-tollgate-" + kPub.substr(1) + "`-" + kSecret, KeyShape::Malformed},
        Shape{"brace", "sk-tollgate-" + kPub + "-" + kSecret.substr(1) + "{", KeyShape::Malformed}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(KeyedHash, IsHmacSha256) {
  // RFC 4231 test case 2.
  EXPECT_EQ(toHex(keyedHash("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(KeyedHash, HashesAKeyLongerThanABlockFirst) {
  // RFC 4231 test case 6: a 131-byte key.
  EXPECT_EQ(toHex(keyedHash(std::string(131, '\xaa'),
                            "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // RFC 4231 test case 1: a short key, padded; one hasher serves many messages.
  const KeyedHasher h(std::string(20, '\x0b'));
  EXPECT_EQ(toHex(h("Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(toHex(h("Hi There")), toHex(keyedHash(std::string(20, '\x0b'), "Hi There")));
}

TEST(KeyedHash, DependsOnTheServerSecret) {
  EXPECT_NE(keyedHash("one server secret", kSecret), keyedHash("another secret", kSecret));
  EXPECT_TRUE(constantTimeEqual(keyedHash("s", kSecret), keyedHash("s", kSecret)));
  EXPECT_FALSE(constantTimeEqual(keyedHash("s", kSecret), keyedHash("s", kSecret + "x")));
}

TEST(KeyedHash, HexRoundTripsAndRefusesOtherText) {
  const Digest d = keyedHash("s", "t");
  Digest back{};
  ASSERT_TRUE(fromHex(toHex(d), back));
  EXPECT_EQ(back, d);
  EXPECT_FALSE(fromHex(toHex(d).substr(1), back));
  EXPECT_FALSE(fromHex(std::string(64, 'g'), back));
  EXPECT_FALSE(fromHex(std::string(64, 'A'), back));  // We only ever write lower case.
}

}  // namespace
}  // namespace tollgate::auth
