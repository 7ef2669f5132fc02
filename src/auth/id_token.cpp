#include "auth/id_token.hpp"

#include <cjose/cjose.h>
#include <openssl/crypto.h>

#include <array>
#include <memory>

#include "core/base64.hpp"
#include "core/email.hpp"
#include "core/json.hpp"

namespace tollgate::auth {
namespace {

using Failure = IdTokenFailure;

/// r and s of P-256, 32 bytes each (RFC 7518 §3.4). cjose splits whatever it is given in two.
constexpr std::size_t kEs256SignatureBytes = 64;

/// The three segments of a compact JWS, decoded.
struct Segments {
  std::string header;
  std::string payload;
  std::string signature;
};

/// Exactly three non-empty segments of canonical base64url: cjose's own split looks only for the
/// first two dots, and its decoder is laxer.
std::optional<Segments> split(std::string_view token) {
  std::array<std::string, 3> decoded;
  for (std::size_t i = 0; i < decoded.size(); ++i) {
    const std::size_t dot = token.find('.');
    const bool last = i + 1 == decoded.size();
    if (last != (dot == std::string_view::npos)) {
      return std::nullopt;
    }
    const std::string_view segment = token.substr(0, dot);
    auto bytes = base64::decodeUrl(segment);
    if (segment.empty() || !bytes) {
      return std::nullopt;
    }
    decoded[i] = std::move(*bytes);
    token.remove_prefix(last ? token.size() : dot + 1);
  }
  return Segments{std::move(decoded[0]), std::move(decoded[1]), std::move(decoded[2])};
}

/// `text` as a JSON object with no repeated key.
bool parseObject(rapidjson::Document& doc, const std::string& text) {
  return !json::parse(doc, text, json::Keys::Unique) && doc.IsObject();
}

struct JwsRelease {
  void operator()(cjose_jws_t* jws) const { cjose_jws_release(jws); }
};

/// cjose's verdict on the signature, after it read the header to the same `alg`.
std::optional<Failure> verifySignature(std::string_view token, const cjose_jwk_t* key,
                                       std::string_view alg) {
  cjose_err err{};
  const std::unique_ptr<cjose_jws_t, JwsRelease> jws(
      cjose_jws_import(token.data(), token.size(), &err));
  if (!jws) {
    return Failure::Malformed;
  }
  const char* their_alg = cjose_header_get(cjose_jws_get_protected(jws.get()), CJOSE_HDR_ALG, &err);
  if (their_alg == nullptr || alg != their_alg) {
    return Failure::Malformed;
  }
  if (!cjose_jws_verify(jws.get(), key, &err)) {
    return Failure::BadSignature;
  }
  return std::nullopt;
}

/// `aud` is the client id, or an array holding it; with other audiences beside it, `azp` must
/// name the client, and when `azp` is present it must anyway (OIDC Core §3.1.3.7 items 3 to 5).
bool audienceIsUs(const rapidjson::Value& claims, std::string_view client_id) {
  const rapidjson::Value* aud = json::member(claims, "aud");
  bool ours = false;
  bool others = false;
  if (aud != nullptr && aud->IsString()) {
    ours = json::view(*aud) == client_id;
  } else if (aud != nullptr && aud->IsArray()) {
    for (const rapidjson::Value& a : aud->GetArray()) {
      const bool us = a.IsString() && json::view(a) == client_id;
      ours = ours || us;
      others = others || !us;
    }
  }
  const rapidjson::Value* azp = json::member(claims, "azp");
  if (!ours || (others && azp == nullptr)) {
    return false;
  }
  return azp == nullptr || (azp->IsString() && json::view(*azp) == client_id);
}

bool nonceMatches(const rapidjson::Value& claims, std::string_view expected) {
  const auto nonce = json::stringMember(claims, "nonce");
  return nonce && !expected.empty() && nonce->size() == expected.size() &&
         CRYPTO_memcmp(nonce->data(), expected.data(), expected.size()) == 0;
}

/// The claims after the signature, in order.
Result<IdClaims, Failure> checkClaims(const rapidjson::Value& claims, const IdTokenExpect& expect) {
  if (json::stringMember(claims, "iss") != expect.issuer) {
    return Failure::WrongIssuer;
  }
  if (!audienceIsUs(claims, expect.client_id)) {
    return Failure::WrongAudience;
  }
  const auto exp = json::intMember(claims, "exp");
  const auto iat = json::intMember(claims, "iat");
  if (!exp || !iat) {
    return Failure::Malformed;
  }
  // now and skew are ours, so these sides cannot overflow whatever the token says.
  if (*exp <= expect.now_s - expect.skew_s) {
    return Failure::Expired;
  }
  const std::int64_t latest = expect.now_s + expect.skew_s;
  if (*iat > latest) {
    return Failure::NotYetValid;
  }
  if (json::member(claims, "nbf") != nullptr) {
    const auto nbf = json::intMember(claims, "nbf");
    if (!nbf) {
      return Failure::Malformed;
    }
    if (*nbf > latest) {
      return Failure::NotYetValid;
    }
  }
  if (!nonceMatches(claims, expect.nonce)) {
    return Failure::WrongNonce;
  }
  const auto sub = json::stringMember(claims, "sub");
  if (!sub || sub->empty()) {
    return Failure::Malformed;
  }
  const auto email_text = json::stringMember(claims, "email");
  auto address = email_text ? email::normalize(*email_text) : std::nullopt;
  if (!address) {
    return Failure::NoEmail;
  }
  const rapidjson::Value* verified = json::member(claims, "email_verified");
  if (verified == nullptr || !verified->IsTrue()) {
    return Failure::EmailUnverified;
  }
  IdClaims out{std::string(*sub), std::move(*address), true, std::nullopt};
  if (const auto name = json::stringMember(claims, "name")) {
    out.name = std::string(*name);
  }
  return out;
}

}  // namespace

std::string_view failureName(IdTokenFailure failure) {
  switch (failure) {
    case Failure::Malformed:
      return "malformed";
    case Failure::UnsupportedAlg:
      return "unsupported_alg";
    case Failure::UnknownKey:
      return "unknown_key";
    case Failure::BadSignature:
      return "bad_signature";
    case Failure::WrongIssuer:
      return "wrong_issuer";
    case Failure::WrongAudience:
      return "wrong_audience";
    case Failure::Expired:
      return "expired";
    case Failure::NotYetValid:
      return "not_yet_valid";
    case Failure::WrongNonce:
      return "wrong_nonce";
    case Failure::NoEmail:
      return "no_email";
    case Failure::EmailUnverified:
      return "email_unverified";
  }
  return "unknown";
}

Result<IdClaims, IdTokenFailure> verifyIdToken(std::string_view token, const Jwks& keys,
                                               const IdTokenExpect& expect) {
  if (token.size() > kMaxIdTokenBytes) {
    return Failure::Malformed;
  }
  const auto segments = split(token);
  rapidjson::Document header;
  if (!segments || !parseObject(header, segments->header)) {
    return Failure::Malformed;
  }
  const rapidjson::Value* kid = json::member(header, "kid");
  if (kid != nullptr && !kid->IsString()) {
    return Failure::Malformed;
  }
  const auto alg_name = json::stringMember(header, "alg");
  if (!alg_name || (*alg_name != "RS256" && *alg_name != "ES256") ||
      json::member(header, "crit") != nullptr) {
    return Failure::UnsupportedAlg;
  }
  const JwsAlg alg = *alg_name == "RS256" ? JwsAlg::Rs256 : JwsAlg::Es256;
  const cjose_jwk_t* key =
      keys.find(kid != nullptr ? std::optional(json::view(*kid)) : std::nullopt, alg);
  if (key == nullptr) {
    return Failure::UnknownKey;
  }
  if (alg == JwsAlg::Es256 && segments->signature.size() != kEs256SignatureBytes) {
    return Failure::BadSignature;
  }
  if (const auto failure = verifySignature(token, key, *alg_name)) {
    return *failure;
  }
  rapidjson::Document claims;
  if (!parseObject(claims, segments->payload)) {
    return Failure::Malformed;
  }
  return checkClaims(claims, expect);
}

}  // namespace tollgate::auth
