#include "auth/api_key.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "core/text.hpp"

namespace tollgate::auth {
namespace {

constexpr std::string_view kBase62 =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

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

bool isPublicId(std::string_view text) {
  return text.size() == kPublicIdLength && text::isBase62(text);
}

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
  if (!text::isBase62(public_id) || !text::isBase62(secret)) {
    return p;
  }
  return {KeyShape::Ok, public_id, secret};
}

namespace {

constexpr std::size_t kBlock = 64;  // SHA-256's block size

void check(bool ok) {
  if (!ok) {
    throw std::runtime_error("SHA-256 failed");
  }
}

/// A digest context that frees itself: one per thread for KeyedHasher's work.
struct ContextDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

EVP_MD_CTX* padded(const EVP_MD* md, const std::array<unsigned char, kBlock>& key,
                   unsigned char pad) {
  std::array<unsigned char, kBlock> block{};
  for (std::size_t i = 0; i < kBlock; ++i) {
    block[i] = static_cast<unsigned char>(key[i] ^ pad);
  }
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  check(c != nullptr && EVP_DigestInit_ex(c, md, nullptr) == 1 &&
        EVP_DigestUpdate(c, block.data(), block.size()) == 1);
  OPENSSL_cleanse(block.data(), block.size());
  return c;
}

}  // namespace

KeyedHasher::KeyedHasher(std::string_view server_secret) {
  // RFC 2104: a key longer than a block is hashed first; a shorter one is padded with zeros.
  std::array<unsigned char, kBlock> key{};
  if (server_secret.size() > kBlock) {
    unsigned int n = 0;
    check(EVP_Digest(server_secret.data(), server_secret.size(), key.data(), &n, EVP_sha256(),
                     nullptr) == 1);
  } else {
    std::copy(server_secret.begin(), server_secret.end(), key.begin());
  }
  inner_ = padded(EVP_sha256(), key, 0x36);
  outer_ = padded(EVP_sha256(), key, 0x5c);
  OPENSSL_cleanse(key.data(), key.size());
}

KeyedHasher::~KeyedHasher() {
  EVP_MD_CTX_free(inner_);
  EVP_MD_CTX_free(outer_);
}

Digest KeyedHasher::operator()(std::string_view message) const {
  thread_local std::unique_ptr<EVP_MD_CTX, ContextDeleter> work(EVP_MD_CTX_new());
  Digest inner{};
  Digest out{};
  unsigned int n = 0;
  check(work != nullptr && EVP_MD_CTX_copy_ex(work.get(), inner_) == 1 &&
        EVP_DigestUpdate(work.get(), message.data(), message.size()) == 1 &&
        EVP_DigestFinal_ex(work.get(), inner.data(), &n) == 1 &&
        EVP_MD_CTX_copy_ex(work.get(), outer_) == 1 &&
        EVP_DigestUpdate(work.get(), inner.data(), inner.size()) == 1 &&
        EVP_DigestFinal_ex(work.get(), out.data(), &n) == 1);
  return out;
}

Digest keyedHash(std::string_view server_secret, std::string_view secret) {
  return KeyedHasher(server_secret)(secret);
}

std::string toHex(const Digest& d) { return text::hex(d); }

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
