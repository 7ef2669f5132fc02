#include "auth/sealed.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>
#include <stdexcept>

#include "auth/api_key.hpp"
#include "core/base64.hpp"

namespace tollgate::auth {
namespace {

constexpr int kNonceBytes = 12;
constexpr int kTagBytes = 16;

using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

const unsigned char* bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

unsigned char* bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

}  // namespace

Sealer::Sealer(std::string_view server_secret, std::string_view purpose) : purpose_(purpose) {
  const Digest d = keyedHash(server_secret, "sealed:" + purpose_);
  key_.assign(reinterpret_cast<const char*>(d.data()), d.size());
}

std::string Sealer::seal(std::string_view plaintext) const {
  std::string out(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  if (RAND_bytes(bytes(out), kNonceBytes) != 1) {
    throw std::runtime_error("the random number generator failed");
  }
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0;
  const bool ok =
      ctx &&
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(key_), bytes(out)) == 1 &&
      EVP_EncryptUpdate(ctx.get(), nullptr, &n, bytes(purpose_),
                        static_cast<int>(purpose_.size())) == 1 &&
      EVP_EncryptUpdate(ctx.get(), bytes(out) + kNonceBytes, &n, bytes(plaintext),
                        static_cast<int>(plaintext.size())) == 1 &&
      EVP_EncryptFinal_ex(ctx.get(), bytes(out) + kNonceBytes + n, &n) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                          bytes(out) + kNonceBytes + plaintext.size()) == 1;
  if (!ok) {
    throw std::runtime_error("sealing failed");
  }
  return base64::encodeUrl(out);
}

std::optional<std::string> Sealer::open(std::string_view sealed) const {
  constexpr std::size_t kMaxSealed = 8 * 1024;
  if (sealed.size() > kMaxSealed) {
    return std::nullopt;
  }
  auto raw = base64::decodeUrl(sealed);
  if (!raw || raw->size() < static_cast<std::size_t>(kNonceBytes + kTagBytes)) {
    return std::nullopt;
  }
  const std::size_t length = raw->size() - kNonceBytes - kTagBytes;
  std::string plain(length, '\0');
  std::string tag = raw->substr(kNonceBytes + length);
  CipherCtx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int n = 0;
  const bool ok =
      ctx &&
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, bytes(key_), bytes(*raw)) == 1 &&
      EVP_DecryptUpdate(ctx.get(), nullptr, &n, bytes(purpose_),
                        static_cast<int>(purpose_.size())) == 1 &&
      EVP_DecryptUpdate(ctx.get(), bytes(plain), &n, bytes(*raw) + kNonceBytes,
                        static_cast<int>(length)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, bytes(tag)) == 1 &&
      EVP_DecryptFinal_ex(ctx.get(), bytes(plain) + n, &n) == 1;
  if (!ok) {
    return std::nullopt;
  }
  return plain;
}

}  // namespace tollgate::auth
