#include "auth/pkce.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <array>
#include <stdexcept>

#include "core/base64.hpp"

namespace tollgate::auth {
namespace {

constexpr std::string_view kUnreserved =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";

void randomBytes(unsigned char* out, std::size_t n) {
  if (RAND_bytes(out, static_cast<int>(n)) != 1) {
    throw std::runtime_error("the random number generator failed");
  }
}

}  // namespace

std::string newCodeVerifier() {
  // 66 * 3 = 198: bytes of 198 and above are dropped so every character is equally likely.
  constexpr unsigned kLimit = 198;
  std::string out;
  out.reserve(kCodeVerifierLength);
  std::array<unsigned char, 96> pool{};
  while (out.size() < kCodeVerifierLength) {
    randomBytes(pool.data(), pool.size());
    for (const unsigned char b : pool) {
      if (b < kLimit && out.size() < kCodeVerifierLength) {
        out.push_back(kUnreserved[b % kUnreserved.size()]);
      }
    }
  }
  return out;
}

std::string codeChallengeS256(std::string_view verifier) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int n = 0;
  if (EVP_Digest(verifier.data(), verifier.size(), digest.data(), &n, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 failed");
  }
  return base64::encodeUrl(std::string_view(reinterpret_cast<const char*>(digest.data()), n));
}

std::string randomToken(std::size_t bytes) {
  std::string raw(bytes, '\0');
  randomBytes(reinterpret_cast<unsigned char*>(raw.data()), raw.size());
  return base64::encodeUrl(raw);
}

}  // namespace tollgate::auth
