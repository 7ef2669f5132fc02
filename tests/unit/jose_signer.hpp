// Keys and tokens for the OpenID Connect tests: real keys made with cjose, their public JWKs
// for a JWKS document, and compact JWS tokens signed with them (cjose_jws_sign), with whatever
// header and payload a test needs.
#pragma once

#include <cjose/cjose.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tollgate::test {

struct JwkRelease {
  void operator()(cjose_jwk_t* jwk) const { cjose_jwk_release(jwk); }
};
using JwkPtr = std::unique_ptr<cjose_jwk_t, JwkRelease>;

/// A key pair (or an HMAC secret) and its kid.
struct TestKey {
  JwkPtr jwk;

  static TestKey rsa(const char* kid, std::size_t bits = 2048) {
    static const std::uint8_t kE[] = {0x01, 0x00, 0x01};
    cjose_err err{};
    return named(cjose_jwk_create_RSA_random(bits, kE, sizeof kE, &err), kid);
  }
  static TestKey ec(const char* kid, cjose_jwk_ec_curve curve = CJOSE_JWK_EC_P_256) {
    cjose_err err{};
    return named(cjose_jwk_create_EC_random(curve, &err), kid);
  }
  /// An HMAC key whose bytes are `secret`.
  static TestKey oct(std::string_view secret) {
    cjose_err err{};
    return named(cjose_jwk_create_oct_spec(reinterpret_cast<const std::uint8_t*>(secret.data()),
                                           secret.size(), &err),
                 nullptr);
  }

  /// The JWK as JSON: its public members only, or with `priv` its private ones too.
  std::string json(bool priv = false) const {
    cjose_err err{};
    char* text = cjose_jwk_to_json(jwk.get(), priv, &err);
    EXPECT_NE(text, nullptr);
    std::string out = text != nullptr ? text : "";
    cjose_get_dealloc()(text);
    return out;
  }

 private:
  static TestKey named(cjose_jwk_t* jwk, const char* kid) {
    EXPECT_NE(jwk, nullptr);
    cjose_err err{};
    if (jwk != nullptr && kid != nullptr) {
      EXPECT_TRUE(cjose_jwk_set_kid(jwk, kid, std::string_view(kid).size(), &err));
    }
    return TestKey{JwkPtr(jwk)};
  }
};

/// `jwk` (a JSON object) with `members` (name, raw JSON value) added at its end.
inline std::string withMembers(std::string jwk,
                               std::initializer_list<std::pair<const char*, const char*>> members) {
  jwk.pop_back();  // the closing brace
  for (const auto& [name, value] : members) {
    jwk += std::string(",\"") + name + "\":" + value;
  }
  return jwk + "}";
}

/// A JWKS document of these JWKs.
inline std::string jwksOf(const std::vector<std::string>& jwks) {
  std::string out = R"({"keys":[)";
  for (std::size_t i = 0; i < jwks.size(); ++i) {
    out += (i == 0 ? "" : ",") + jwks[i];
  }
  return out + "]}";
}

/// A protected header: `alg`, then `kid` unless it is nullopt, then `extra` (name, raw JSON).
struct Header {
  std::string alg;
  std::optional<std::string> kid;
  std::vector<std::pair<std::string, std::string>> extra;
};

/// The compact JWS of `payload` (any bytes) under `header`, signed by `key` with cjose.
inline std::string sign(const TestKey& key, const Header& header, std::string_view payload) {
  cjose_err err{};
  cjose_header_t* h = cjose_header_new(&err);
  EXPECT_TRUE(cjose_header_set(h, CJOSE_HDR_ALG, header.alg.c_str(), &err));
  if (header.kid) {
    EXPECT_TRUE(cjose_header_set(h, CJOSE_HDR_KID, header.kid->c_str(), &err));
  }
  for (const auto& [name, value] : header.extra) {
    EXPECT_TRUE(cjose_header_set_raw(h, name.c_str(), value.c_str(), &err));
  }
  cjose_jws_t* jws =
      cjose_jws_sign(key.jwk.get(), h, reinterpret_cast<const std::uint8_t*>(payload.data()),
                     payload.size(), &err);
  cjose_header_release(h);
  EXPECT_NE(jws, nullptr) << (err.message != nullptr ? err.message : "");
  const char* compact = nullptr;
  std::string out;
  if (jws != nullptr && cjose_jws_export(jws, &compact, &err)) {
    out = compact;
  }
  cjose_jws_release(jws);
  return out;
}

}  // namespace tollgate::test
