#include "auth/api_key.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace tollgate::auth {
namespace {

constexpr std::string_view kBase62 =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

bool isBase62(std::string_view text) {
  for (const char c : text) {
    if (kBase62.find(c) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string randomBase62(std::size_t length) {
  // 62 * 4 = 248: bytes of 248 and above are dropped so every character is equally likely.
  constexpr unsigned kLimit = 248;
  std::string out;
  out.reserve(length);
  std::array<unsigned char, 64> pool{};
  while (out.size() < length) {
    if (RAND_bytes(pool.data(), static_cast<int>(pool.size())) != 1) {
      throw std::runtime_error("the random number generator failed");
    }
    for (const unsigned char b : pool) {
      if (b < kLimit && out.size() < length) {
        out.push_back(kBase62[b % kBase62.size()]);
      }
    }
  }
  return out;
}

NewKey generateKey() {
  NewKey k{randomBase62(kPublicIdLength), randomBase62(kSecretLength), {}};
  k.full = std::string(kKeyPrefix) + k.public_id + "-" + k.secret;
  return k;
}

bool isPublicId(std::string_view text) { return text.size() == kPublicIdLength && isBase62(text); }

ParsedKey parseKey(std::string_view key) {
  ParsedKey p;
  if (!key.starts_with(kKeyPrefix)) {
    p.shape = KeyShape::WrongPrefix;
    return p;
  }
  key.remove_prefix(kKeyPrefix.size());
  if (key.size() != kPublicIdLength + 1 + kSecretLength || key[kPublicIdLength] != '-') {
    return p;
  }
  const std::string_view public_id = key.substr(0, kPublicIdLength);
  const std::string_view secret = key.substr(kPublicIdLength + 1);
  if (!isBase62(public_id) || !isBase62(secret)) {
    return p;
  }
  return {KeyShape::Ok, public_id, secret};
}

Digest keyedHash(std::string_view server_secret, std::string_view secret) {
  Digest d{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), server_secret.data(), static_cast<int>(server_secret.size()),
           reinterpret_cast<const unsigned char*>(secret.data()), secret.size(), d.data(),
           &length) == nullptr ||
      length != d.size()) {
    throw std::runtime_error("HMAC-SHA256 failed");
  }
  return d;
}

std::string toHex(const Digest& d) {
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  out.reserve(d.size() * 2);
  for (const std::uint8_t b : d) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

bool fromHex(std::string_view hex, Digest& out) {
  if (hex.size() != out.size() * 2) {
    return false;
  }
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    return -1;
  };
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]);
    const int lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return false;
    }
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return true;
}

bool constantTimeEqual(const Digest& a, const Digest& b) {
  return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tollgate::auth
