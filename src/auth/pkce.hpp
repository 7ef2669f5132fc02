// The random values of an OpenID Connect sign-in: PKCE's code verifier and its S256 challenge
// (RFC 7636), and the state and nonce tokens, all from OpenSSL's CSPRNG.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tollgate::auth {

/// Characters of a fresh code verifier (RFC 7636 §4.1 allows 43 to 128).
inline constexpr std::size_t kCodeVerifierLength = 64;

/// kCodeVerifierLength characters of RFC 3986's unreserved set `[A-Za-z0-9-._~]`, each equally
/// likely. Throws std::runtime_error when the random number generator fails.
std::string newCodeVerifier();

/// base64url(SHA-256(verifier)) without padding: the `code_challenge` for method S256.
std::string codeChallengeS256(std::string_view verifier);

/// `bytes` random bytes as base64url without padding (a state or nonce: 32 bytes give 43
/// characters). Throws std::runtime_error when the random number generator fails.
std::string randomToken(std::size_t bytes);

}  // namespace tollgate::auth
