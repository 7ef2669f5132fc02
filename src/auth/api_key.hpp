// API keys and other bearer secrets: their format, generation from OpenSSL's CSPRNG, and the
// keyed hash that is all the store ever keeps of a secret.
//
// A key is `sk-tollgate-<public_id>-<secret>`: the public id (12 base62 characters, never a `-`,
// so the key splits unambiguously) finds the row and may appear in logs; the secret
// (32 base62 characters, about 190 bits) is only ever compared through its HMAC-SHA256 under the
// server secret, in constant time.
#pragma once

#include <openssl/types.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tollgate::auth {

inline constexpr std::string_view kKeyPrefix = "sk-tollgate-";
inline constexpr std::size_t kPublicIdLength = 12;
inline constexpr std::size_t kSecretLength = 32;

using Digest = std::array<std::uint8_t, 32>;

/// A freshly generated key; `full` is what the user is shown, once.
struct NewKey {
  std::string public_id;
  std::string secret;
  std::string full;
};

NewKey generateKey();

/// `length` random base62 characters from the CSPRNG (rejection sampling, no bias).
std::string randomBase62(std::size_t length);

/// How a presented key is shaped.
enum class KeyShape {
  Ok,
  WrongPrefix,  ///< Does not start with sk-tollgate-.
  Malformed,    ///< Right prefix, but not <12 base62>-<32 base62>.
};

struct ParsedKey {
  KeyShape shape = KeyShape::Malformed;
  std::string_view public_id;
  std::string_view secret;
};

/// Splits a presented key; views point into `key`.
ParsedKey parseKey(std::string_view key);

/// True when `text` is a public id (12 base62 characters).
bool isPublicId(std::string_view text);

/// HMAC-SHA256 under one server secret, with the key's inner and outer pads absorbed once, so a
/// request pays two SHA-256 compressions (about 0.3 us) instead of OpenSSL's HMAC() set-up
/// (about 2 us). Safe to use from several threads at once.
class KeyedHasher {
 public:
  explicit KeyedHasher(std::string_view server_secret);
  ~KeyedHasher();
  KeyedHasher(const KeyedHasher&) = delete;
  KeyedHasher& operator=(const KeyedHasher&) = delete;

  Digest operator()(std::string_view message) const;

 private:
  EVP_MD_CTX* inner_;  ///< SHA-256 state after (key ^ ipad)
  EVP_MD_CTX* outer_;  ///< SHA-256 state after (key ^ opad)
};

/// HMAC-SHA256 of `secret` under `server_secret` (sets up a KeyedHasher: for one-off uses).
Digest keyedHash(std::string_view server_secret, std::string_view secret);

/// Lower-case hex of a digest, and back (false when `hex` is not 64 hex digits).
std::string toHex(const Digest& d);
bool fromHex(std::string_view hex, Digest& out);

/// Compares two digests in time independent of where they differ.
bool constantTimeEqual(const Digest& a, const Digest& b);

}  // namespace tollgate::auth
