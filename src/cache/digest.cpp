#include "cache/digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <stdexcept>

#include "core/text.hpp"

namespace tollgate::cache {

struct Digest::Context {
  EVP_MD_CTX* md = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(md); }
};

Digest::Digest() : ctx_(std::make_unique<Context>()) {
  if (ctx_->md == nullptr || EVP_DigestInit_ex(ctx_->md, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 is not available");
  }
}

Digest::~Digest() = default;

void Digest::update(std::string_view bytes) {
  EVP_DigestUpdate(ctx_->md, bytes.data(), bytes.size());
}

void Digest::add(std::string_view bytes) {
  const std::string length = std::to_string(bytes.size()) + ':';
  update(length);
  update(bytes);
}

void Digest::addSpool(const Spool& spool, std::size_t offset, std::size_t size) {
  update(std::to_string(size) + ':');
  constexpr std::size_t kPiece = 64 * 1024;
  std::array<char, kPiece> piece{};
  std::size_t done = 0;
  while (done < size) {
    const auto got =
        spool.read(offset + done, std::span(piece.data(), std::min(kPiece, size - done)));
    if (!got || *got == 0) {
      update("!");  // Unreadable: a digest no retry can match by chance.
      return;
    }
    update(std::string_view(piece.data(), *got));
    done += *got;
  }
}

std::string Digest::hex() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_->md, out.data(), &n);
  return text::hex({out.data(), n});
}

}  // namespace tollgate::cache
