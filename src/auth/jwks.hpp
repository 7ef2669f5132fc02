// An OpenID provider's signing keys, read from its JWKS document (RFC 7517) and kept as cjose
// keys: public RSA keys of 2048 to 8192 bits for RS256 and public P-256 keys for ES256, nothing
// else. What verifyIdToken (auth/id_token) checks signatures with.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

// cjose's key (cjose/jwk.h), declared here so that cjose stays out of this header's includers.
typedef struct _cjose_jwk_int cjose_jwk_t;

namespace tollgate::auth {

/// The JWS algorithms an ID token may be signed with.
enum class JwsAlg { Rs256, Es256 };

/// A JWKS document larger than this is refused.
inline constexpr std::size_t kMaxJwksBytes = 256 * 1024;
/// At most this many keys are kept; the usable keys after them are ignored.
inline constexpr std::size_t kMaxJwksKeys = 32;

class Jwks;

/// Reads a JWKS document `{"keys": [...]}`. Keeps, in order, each key that is a public RSA key of
/// 2048 to 8192 bits (with an exponent of at most 64 bits) or a public P-256 key, whose `use` (if
/// present) is "sig", whose `alg` (if present) is RS256 for RSA and ES256 for EC, and whose `kid`
/// (if present) is a string not already kept for the same algorithm. A key that carries private
/// members (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`) is skipped. An error, a message for the log,
/// when the document is larger than kMaxJwksBytes, not JSON (or repeats a key in an object), not
/// shaped like a JWKS, or yields no usable key (the message then says why, for the first keys).
Result<Jwks, std::string> parseJwks(std::string_view json);

/// The usable keys of one JWKS. Move-only; it releases its cjose keys when destroyed. cjose
/// counts a key's references without atomics, so a Jwks and the keys it lends are used by one
/// thread only: each worker keeps its own.
class Jwks {
 public:
  /// With a `kid`: the key with that kid whose type suits `alg` (RSA for RS256, P-256 for
  /// ES256). Without: the one key that suits `alg`, when exactly one does. nullptr otherwise.
  /// The key lives as long as this Jwks.
  const cjose_jwk_t* find(std::optional<std::string_view> kid, JwsAlg alg) const;

  /// The number of keys kept.
  std::size_t size() const { return keys_.size(); }

 private:
  friend Result<Jwks, std::string> parseJwks(std::string_view json);

  struct Release {
    void operator()(cjose_jwk_t* jwk) const;
  };
  struct Key {
    std::optional<std::string> kid;
    JwsAlg alg;
    std::unique_ptr<cjose_jwk_t, Release> jwk;
  };

  std::vector<Key> keys_;
};

}  // namespace tollgate::auth
