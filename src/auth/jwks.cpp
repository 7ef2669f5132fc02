#include "auth/jwks.hpp"

#include <cjose/cjose.h>

#include <algorithm>
#include <array>
#include <bit>
#include <variant>

#include "core/base64.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::auth {
namespace {

constexpr std::size_t kMinRsaBits = 2048;
// Larger moduli or exponents only make each verification slower; no provider uses them (e is
// 65537 in practice, and 64 bits is OpenSSL's own bound for large moduli).
constexpr std::size_t kMaxRsaBits = 8192;
constexpr std::size_t kMaxRsaExponentBits = 64;
constexpr std::size_t kP256CoordinateBytes = 32;
/// The reasons for skipped keys that a "no usable key" message lists at most.
constexpr std::size_t kMaxReasons = 8;
constexpr std::array<std::string_view, 7> kPrivateMembers = {"d",  "p",  "q",  "dp",
                                                             "dq", "qi", "oth"};

/// Significant bits of a big-endian unsigned integer.
std::size_t bitLength(std::string_view big_endian) {
  const std::size_t first = big_endian.find_first_not_of('\0');
  if (first == std::string_view::npos) {
    return 0;
  }
  const auto top = static_cast<unsigned char>(big_endian[first]);
  return (big_endian.size() - first) * 8 - static_cast<std::size_t>(std::countl_zero(top));
}

/// The member `name` of a key as a base64url string, decoded; nullopt when absent or not one.
std::optional<std::string> bytesMember(const rapidjson::Value& key, std::string_view name) {
  const auto text = json::stringMember(key, name);
  return text ? base64::decodeUrl(*text) : std::nullopt;
}

/// A key kept for import: which algorithm it serves, its kid, and the JWK cjose is given, which
/// holds only the members checked here (so cjose's JSON reader sees nothing else).
struct Candidate {
  JwsAlg alg;
  std::optional<std::string> kid;
  std::string jwk;
};

/// Checks one member of "keys"; the reason it is skipped, or what to import.
std::variant<Candidate, std::string> check(const rapidjson::Value& key) {
  if (!key.IsObject()) {
    return std::string("not an object");
  }
  for (const std::string_view name : kPrivateMembers) {
    if (json::member(key, name) != nullptr) {
      return "carries the private member \"" + std::string(name) + "\"";
    }
  }
  const auto kty = json::stringMember(key, "kty");
  if (!kty || (*kty != "RSA" && *kty != "EC")) {
    return std::string("kty is not RSA or EC");
  }
  const JwsAlg alg = *kty == "RSA" ? JwsAlg::Rs256 : JwsAlg::Es256;
  if (const rapidjson::Value* use = json::member(key, "use")) {
    if (!use->IsString() || json::view(*use) != "sig") {
      return std::string("use is not \"sig\"");
    }
  }
  if (const rapidjson::Value* a = json::member(key, "alg")) {
    const std::string_view want = alg == JwsAlg::Rs256 ? "RS256" : "ES256";
    if (!a->IsString() || json::view(*a) != want) {
      return "alg is not " + std::string(want) + " for a key of type " + std::string(*kty);
    }
  }
  Candidate c{alg, std::nullopt, {}};
  if (const rapidjson::Value* kid = json::member(key, "kid")) {
    if (!kid->IsString()) {
      return std::string("kid is not a string");
    }
    c.kid = std::string(json::view(*kid));
  }
  json::Writer w;
  w.startObject();
  w.field("kty", *kty);
  if (alg == JwsAlg::Rs256) {
    const auto n = bytesMember(key, "n");
    const auto e = bytesMember(key, "e");
    if (!n || !e || bitLength(*e) == 0 || bitLength(*e) > kMaxRsaExponentBits) {
      return std::string("n or e is not a base64url number (e of at most 64 bits)");
    }
    const std::size_t bits = bitLength(*n);
    if (bits < kMinRsaBits || bits > kMaxRsaBits) {
      return "an RSA key of " + std::to_string(bits) + " bits (2048 to 8192 are used)";
    }
    w.field("n", *json::stringMember(key, "n"));
    w.field("e", *json::stringMember(key, "e"));
  } else {
    if (json::stringMember(key, "crv") != "P-256") {
      return std::string("an EC key not on P-256");
    }
    const auto x = bytesMember(key, "x");
    const auto y = bytesMember(key, "y");
    if (!x || !y || x->size() != kP256CoordinateBytes || y->size() != kP256CoordinateBytes) {
      return std::string("x or y is not a P-256 coordinate in base64url");
    }
    w.field("crv", "P-256");
    w.field("x", *json::stringMember(key, "x"));
    w.field("y", *json::stringMember(key, "y"));
  }
  w.endObject();
  c.jwk = w.take();
  return c;
}

std::string describe(std::size_t index, const rapidjson::Value& key) {
  std::string out = "key " + std::to_string(index);
  if (const auto kid = json::stringMember(key, "kid")) {
    out += " (kid \"" + text::printable(*kid, 64) + "\")";
  }
  return out;
}

}  // namespace

void Jwks::Release::operator()(cjose_jwk_t* jwk) const { cjose_jwk_release(jwk); }

Result<Jwks, std::string> parseJwks(std::string_view json) {
  if (json.size() > kMaxJwksBytes) {
    return "the JWKS is larger than " + std::to_string(kMaxJwksBytes / 1024) + " KiB";
  }
  rapidjson::Document doc;
  if (const auto failure = json::parse(doc, std::string(json), json::Keys::Unique)) {
    return "the JWKS is not JSON: " + failure->reason +
           (failure->path.empty() ? "" : " at " + failure->path);
  }
  const rapidjson::Value* keys = json::member(doc, "keys");
  if (keys == nullptr || !keys->IsArray()) {
    return std::string("the JWKS is not an object with a \"keys\" array");
  }
  Jwks jwks;
  std::vector<std::string> skipped;
  const auto skip = [&](std::size_t index, const std::string& why) {
    if (skipped.size() < kMaxReasons) {
      skipped.push_back(describe(index, (*keys)[static_cast<rapidjson::SizeType>(index)]) + ": " +
                        why);
    }
  };
  for (rapidjson::SizeType i = 0; i < keys->Size() && jwks.keys_.size() < kMaxJwksKeys; ++i) {
    auto checked = check((*keys)[i]);
    if (const auto* why = std::get_if<std::string>(&checked)) {
      skip(i, *why);
      continue;
    }
    Candidate& c = std::get<Candidate>(checked);
    const bool repeated = std::any_of(jwks.keys_.begin(), jwks.keys_.end(), [&](const auto& k) {
      return k.kid && k.kid == c.kid && k.alg == c.alg;
    });
    if (repeated) {
      skip(i, "repeats the kid of an earlier key");
      continue;
    }
    cjose_err err{};
    cjose_jwk_t* jwk = cjose_jwk_import(c.jwk.data(), c.jwk.size(), &err);
    if (jwk == nullptr) {
      skip(i, std::string("cjose cannot import it: ") +
                  (err.message != nullptr ? err.message : "no reason given"));
      continue;
    }
    jwks.keys_.push_back(Jwks::Key{std::move(c.kid), c.alg, {jwk, {}}});
  }
  if (jwks.keys_.empty()) {
    std::string message = "the JWKS has no usable signing key";
    for (std::size_t i = 0; i < skipped.size(); ++i) {
      message += (i == 0 ? ": " : "; ") + skipped[i];
    }
    return message;
  }
  return jwks;
}

const cjose_jwk_t* Jwks::find(std::optional<std::string_view> kid, JwsAlg alg) const {
  const cjose_jwk_t* found = nullptr;
  for (const Key& k : keys_) {
    if (k.alg != alg) {
      continue;
    }
    if (kid) {
      if (k.kid == *kid) {
        return k.jwk.get();
      }
    } else if (found != nullptr) {
      return nullptr;  // Two keys suit alg: without a kid, neither is chosen.
    } else {
      found = k.jwk.get();
    }
  }
  return found;
}

}  // namespace tollgate::auth
