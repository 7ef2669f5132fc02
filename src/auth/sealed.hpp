// Sealed values: a short text a client carries (a cookie) that only this deployment can read or
// have made. AES-256-GCM under a key derived from the server secret for one purpose, which is
// also authenticated, so a value sealed for one purpose never opens for another.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tollgate::auth {

class Sealer {
 public:
  /// A sealer whose key is derived from `server_secret` for `purpose`.
  Sealer(std::string_view server_secret, std::string_view purpose);

  /// `plaintext` sealed: base64url of a random 12-byte nonce, the ciphertext and the 16-byte
  /// tag. Throws std::runtime_error when the random number generator or the cipher fails.
  std::string seal(std::string_view plaintext) const;
  /// The plaintext of a value seal() made with the same key and purpose; nullopt for anything
  /// else (not base64url, too short, altered, another key or purpose).
  std::optional<std::string> open(std::string_view sealed) const;

 private:
  std::string key_;  ///< 32 bytes.
  std::string purpose_;
};

}  // namespace tollgate::auth
