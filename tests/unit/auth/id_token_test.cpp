#include "auth/id_token.hpp"

#include <gtest/gtest.h>

#include <functional>

#include "core/base64.hpp"
#include "jose_signer.hpp"

namespace tollgate::auth {
namespace {

using test::Header;
using test::sign;
using test::TestKey;

constexpr std::int64_t kNow = 1'700'000'000;
const IdTokenExpect kExpect{"https://idp.example", "tollgate-console", "n-0S6_WzA2Mj", kNow, 60};

/// The keys of the tests, made once: RSA ones take a while.
struct Keys {
  TestKey rsa = TestKey::rsa("rsa-1");
  TestKey ec = TestKey::ec("ec-1");
  TestKey impostor = TestKey::rsa("rsa-1");  // Another key that claims the same kid.
  Jwks jwks = std::move(parseJwks(test::jwksOf({rsa.json(), ec.json()}))).value();
};

const Keys& keys() {
  static const Keys* k = new Keys();
  return *k;
}

/// The payload of a good token as (name, raw JSON) members, in order, to change one at a time.
class Claims {
 public:
  Claims& set(const std::string& name, const std::string& raw) {
    for (auto& [n, v] : members_) {
      if (n == name) {
        v = raw;
        return *this;
      }
    }
    return add(name, raw);
  }
  Claims& add(const std::string& name, const std::string& raw) {
    members_.emplace_back(name, raw);
    return *this;
  }
  Claims& erase(const std::string& name) {
    std::erase_if(members_, [&](const auto& m) { return m.first == name; });
    return *this;
  }
  std::string json() const {
    std::string out = "{";
    for (const auto& [n, v] : members_) {
      out += (out.size() > 1 ? ",\"" : "\"") + n + "\":" + v;
    }
    return out + "}";
  }

 private:
  std::vector<std::pair<std::string, std::string>> members_ = {
      {"iss", R"("https://idp.example")"},
      {"sub", R"("248289761001")"},
      {"aud", R"("tollgate-console")"},
      {"exp", std::to_string(kNow + 600)},
      {"iat", std::to_string(kNow)},
      {"nonce", R"("n-0S6_WzA2Mj")"},
      {"email", R"("Jane.Doe@Example.COM")"},
      {"email_verified", "true"},
      {"name", R"("Jane Doe")"},
  };
};

std::string rs256Raw(std::string_view payload) {
  return sign(keys().rsa, Header{"RS256", "rsa-1", {}}, payload);
}

std::string rs256(const Claims& c = {}) { return rs256Raw(c.json()); }

std::string es256(const Claims& c = {}) {
  return sign(keys().ec, Header{"ES256", "ec-1", {}}, c.json());
}

/// `header`.`payload`.`signature`, each given as bytes (base64url-encoded here) or, for the
/// signature, as text.
std::string compact(std::string_view header, std::string_view payload, std::string_view sig) {
  return base64::encodeUrl(header) + "." + base64::encodeUrl(payload) + "." + std::string(sig);
}

Result<IdClaims, IdTokenFailure> verify(std::string_view token) {
  return verifyIdToken(token, keys().jwks, kExpect);
}

TEST(IdToken, AcceptsAGoodRs256Token) {
  const auto claims = verify(rs256());
  ASSERT_TRUE(claims.ok()) << failureName(claims.error());
  EXPECT_EQ(claims->sub, "248289761001");
  EXPECT_EQ(claims->email, "jane.doe@example.com");
  EXPECT_TRUE(claims->email_verified);
  EXPECT_EQ(claims->name, "Jane Doe");
}

TEST(IdToken, AcceptsAGoodEs256Token) {
  const auto claims = verify(es256(Claims().erase("name")));
  ASSERT_TRUE(claims.ok()) << failureName(claims.error());
  EXPECT_EQ(claims->email, "jane.doe@example.com");
  EXPECT_FALSE(claims->name.has_value());
}

TEST(IdToken, AcceptsOtherAudiencesWhenAzpIsTheClient) {
  const Claims c = Claims()
                       .set("aud", R"(["tollgate-console","another-client"])")
                       .add("azp", R"("tollgate-console")");
  EXPECT_TRUE(verify(rs256(c)).ok());
  EXPECT_TRUE(verify(rs256(Claims().set("aud", R"(["tollgate-console"])"))).ok());
}

TEST(IdToken, AllowsTheSkewAtEachBoundAndNoMore) {
  const auto at = [](const char* claim, std::int64_t t) {
    return verify(rs256(Claims().set(claim, std::to_string(t))));
  };
  EXPECT_TRUE(at("exp", kNow - 59).ok());
  EXPECT_EQ(at("exp", kNow - 60).error(), IdTokenFailure::Expired);
  EXPECT_TRUE(at("iat", kNow + 60).ok());
  EXPECT_EQ(at("iat", kNow + 61).error(), IdTokenFailure::NotYetValid);
  EXPECT_TRUE(at("nbf", kNow + 60).ok());
  EXPECT_EQ(at("nbf", kNow + 61).error(), IdTokenFailure::NotYetValid);
}

TEST(IdToken, PicksTheOnlyKeyOfItsTypeWithoutAKid) {
  EXPECT_TRUE(verify(sign(keys().ec, Header{"ES256", std::nullopt, {}}, Claims().json())).ok());
}

struct Case {
  const char* name;
  std::function<std::string()> token;
  IdTokenFailure failure;
};

/// `token` with one character of its signature replaced by another of the alphabet.
std::string tampered(std::string token) {
  char& c = token[token.rfind('.') + 5];
  c = c == 'A' ? 'B' : 'A';
  return token;
}

std::string rsaPublicJwk() { return keys().rsa.json(); }

const Case kCases[] = {
    {"wrong_signature", [] { return tampered(rs256()); }, IdTokenFailure::BadSignature},
    {"wrong_es256_signature", [] { return tampered(es256()); }, IdTokenFailure::BadSignature},
    {"another_key_same_kid",
     [] {
       return sign(keys().impostor, Header{"RS256", "rsa-1", {}}, Claims().json());
     },
     IdTokenFailure::BadSignature},
    {"es256_signature_not_64_bytes",
     [] {
       const std::string t = es256();
       return t.substr(0, t.rfind('.') + 1) + base64::encodeUrl(std::string(72, '\x01'));
     },
     IdTokenFailure::BadSignature},
    {"alg_none", [] { return compact(R"({"alg":"none"})", Claims().json(), "AAAA"); },
     IdTokenFailure::UnsupportedAlg},
    {"alg_none_unsigned", [] { return compact(R"({"alg":"none"})", Claims().json(), ""); },
     IdTokenFailure::Malformed},
    {"hs256_keyed_with_the_rsa_public_key",
     [] {
       return sign(TestKey::oct(rsaPublicJwk()), Header{"HS256", "rsa-1", {}}, Claims().json());
     },
     IdTokenFailure::UnsupportedAlg},
    {"rs512",
     [] {
       return sign(keys().rsa, Header{"RS512", "rsa-1", {}}, Claims().json());
     },
     IdTokenFailure::UnsupportedAlg},
    {"no_alg", [] { return compact(R"({"kid":"rsa-1"})", Claims().json(), "AAAA"); },
     IdTokenFailure::UnsupportedAlg},
    {"crit_header",
     [] {
       return sign(keys().rsa, Header{"RS256", "rsa-1", {{"crit", R"(["exp"])"}}}, Claims().json());
     },
     IdTokenFailure::UnsupportedAlg},
    {"unknown_kid",
     [] {
       return sign(keys().rsa, Header{"RS256", "rsa-2", {}}, Claims().json());
     },
     IdTokenFailure::UnknownKey},
    {"es256_naming_the_rsa_kid",
     [] {
       return sign(keys().ec, Header{"ES256", "rsa-1", {}}, Claims().json());
     },
     IdTokenFailure::UnknownKey},
    {"kid_not_a_string",
     [] {
       return sign(keys().rsa, Header{"RS256", std::nullopt, {{"kid", R"(["rsa-1"])"}}},
                   Claims().json());
     },
     IdTokenFailure::Malformed},
    {"wrong_iss", [] { return rs256(Claims().set("iss", R"("https://idp.example/")")); },
     IdTokenFailure::WrongIssuer},
    {"no_iss", [] { return rs256(Claims().erase("iss")); }, IdTokenFailure::WrongIssuer},
    {"wrong_aud", [] { return rs256(Claims().set("aud", R"("another-client")")); },
     IdTokenFailure::WrongAudience},
    {"aud_array_without_azp",
     [] { return rs256(Claims().set("aud", R"(["tollgate-console","another-client"])")); },
     IdTokenFailure::WrongAudience},
    {"azp_of_another_client", [] { return rs256(Claims().add("azp", R"("another-client")")); },
     IdTokenFailure::WrongAudience},
    {"expired", [] { return rs256(Claims().set("exp", std::to_string(kNow - 3600))); },
     IdTokenFailure::Expired},
    {"exp_not_an_integer", [] { return rs256(Claims().set("exp", "1.7e9")); },
     IdTokenFailure::Malformed},
    {"no_exp", [] { return rs256(Claims().erase("exp")); }, IdTokenFailure::Malformed},
    {"iat_in_the_future", [] { return rs256(Claims().set("iat", std::to_string(kNow + 3600))); },
     IdTokenFailure::NotYetValid},
    {"nbf_in_the_future", [] { return rs256(Claims().add("nbf", std::to_string(kNow + 3600))); },
     IdTokenFailure::NotYetValid},
    {"wrong_nonce", [] { return rs256(Claims().set("nonce", R"("n-0S6_WzA2Mk")")); },
     IdTokenFailure::WrongNonce},
    {"missing_nonce", [] { return rs256(Claims().erase("nonce")); }, IdTokenFailure::WrongNonce},
    {"empty_sub", [] { return rs256(Claims().set("sub", R"("")")); }, IdTokenFailure::Malformed},
    {"no_email", [] { return rs256(Claims().erase("email")); }, IdTokenFailure::NoEmail},
    {"email_not_an_address", [] { return rs256(Claims().set("email", R"("jane doe@x.io")")); },
     IdTokenFailure::NoEmail},
    {"email_verified_false", [] { return rs256(Claims().set("email_verified", "false")); },
     IdTokenFailure::EmailUnverified},
    {"email_verified_as_a_string",
     [] { return rs256(Claims().set("email_verified", R"("true")")); },
     IdTokenFailure::EmailUnverified},
    {"no_email_verified", [] { return rs256(Claims().erase("email_verified")); },
     IdTokenFailure::EmailUnverified},
    {"duplicate_claim", [] { return rs256(Claims().add("email", R"("mallory@evil.example")")); },
     IdTokenFailure::Malformed},
    {"duplicate_header_member",
     [] {
       const std::string t = rs256();
       return compact(R"({"alg":"RS256","kid":"rsa-1","alg":"none"})", Claims().json(),
                      t.substr(t.rfind('.') + 1));
     },
     IdTokenFailure::Malformed},
    {"payload_not_an_object", [] { return rs256Raw("[1,2]"); }, IdTokenFailure::Malformed},
    {"four_segments", [] { return rs256() + ".AAAA"; }, IdTokenFailure::Malformed},
    {"two_segments", [] { return rs256().substr(0, rs256().rfind('.')); },
     IdTokenFailure::Malformed},
    {"padded_segment", [] { return rs256() + "=="; }, IdTokenFailure::Malformed},
    {"oversized",
     [] { return rs256(Claims().add("pad", "\"" + std::string(kMaxIdTokenBytes, 'x') + "\"")); },
     IdTokenFailure::Malformed},
    {"empty", [] { return std::string(); }, IdTokenFailure::Malformed},
};

class IdTokenFailures : public ::testing::TestWithParam<Case> {};

TEST_P(IdTokenFailures, AreNamed) {
  const std::string token = GetParam().token();
  const auto claims = verify(token);
  ASSERT_FALSE(claims.ok()) << token;
  EXPECT_EQ(failureName(claims.error()), failureName(GetParam().failure));
}

INSTANTIATE_TEST_SUITE_P(All, IdTokenFailures, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(IdToken, NamesEveryFailure) {
  EXPECT_EQ(failureName(IdTokenFailure::Malformed), "malformed");
  EXPECT_EQ(failureName(IdTokenFailure::UnknownKey), "unknown_key");
  EXPECT_EQ(failureName(IdTokenFailure::EmailUnverified), "email_unverified");
}

}  // namespace
}  // namespace tollgate::auth
