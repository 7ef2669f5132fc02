// The checks of an OpenID Connect ID token (OIDC Core §3.1.3.7) that a sign-in rests on: a
// compact JWS signed with RS256 or ES256 by a key of the provider's JWKS, for this client, from
// this issuer, current, carrying the nonce of this sign-in and a verified email address. Pure:
// the caller supplies the keys, the expected values and the time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "auth/jwks.hpp"
#include "core/result.hpp"

namespace tollgate::auth {

/// A token longer than this is refused before anything is decoded.
inline constexpr std::size_t kMaxIdTokenBytes = 16 * 1024;

/// What the token must say: from the configuration, the sign-in's stored nonce, and the clock.
struct IdTokenExpect {
  std::string issuer;        ///< byte-equal to `iss`
  std::string client_id;     ///< in `aud` (and `azp`, when present)
  std::string nonce;         ///< equal to `nonce`; never empty
  std::int64_t now_s = 0;    ///< seconds since the Unix epoch
  std::int64_t skew_s = 60;  ///< clock difference allowed with the provider
};

/// What a verified token says of the person.
struct IdClaims {
  std::string sub;
  std::string email;  ///< lower case
  bool email_verified = false;
  std::optional<std::string> name;
};

/// Why a token is refused.
enum class IdTokenFailure {
  Malformed,        ///< larger than kMaxIdTokenBytes, not three base64url segments, a header or
                    ///< payload that is not one JSON object (or repeats a key), a `kid` that is
                    ///< not a string, `exp`, `iat` or `sub` missing (or `sub` empty), or a time
                    ///< that is not an integer
  UnsupportedAlg,   ///< `alg` other than RS256 or ES256 (`none` and HS256 included), or `crit`
  UnknownKey,       ///< no key of the JWKS for the header's `kid` and `alg`: refetch the JWKS once
  BadSignature,     ///< the signature does not verify (or an ES256 one is not 64 bytes)
  WrongIssuer,      ///< `iss` is not the issuer
  WrongAudience,    ///< `aud` lacks the client id, or `azp` is another party's
  Expired,          ///< `exp` has passed (beyond the skew)
  NotYetValid,      ///< `iat` or `nbf` lies in the future (beyond the skew)
  WrongNonce,       ///< `nonce` missing or not this sign-in's
  NoEmail,          ///< `email` missing, not a string, or not shaped like an address
  EmailUnverified,  ///< `email_verified` is not the JSON boolean true (the string "true" is not)
};

/// A name for logs and the audit trail, e.g. "wrong_audience".
std::string_view failureName(IdTokenFailure failure);

/// Verifies `token` against `keys` and `expect` and returns the claims of a token that passes
/// every check, in this order: its size; three non-empty base64url segments; the header, read
/// with core/json (which refuses repeated keys, so cjose's reader cannot see another `alg`);
/// `alg` and `crit`; the key for `kid` and `alg`; an ES256 signature's length; the signature;
/// the payload, read with core/json; `iss`; `aud` and `azp`; `exp`; `iat`; `nbf`; `nonce`
/// (compared in constant time); `sub`; `email`; `email_verified`. The first that fails is the
/// answer.
Result<IdClaims, IdTokenFailure> verifyIdToken(std::string_view token, const Jwks& keys,
                                               const IdTokenExpect& expect);

}  // namespace tollgate::auth
