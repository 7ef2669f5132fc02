// A SHA-256 digest of a sequence of byte strings, each framed by its length (so that ("ab", "c")
// and ("a", "bc") differ), and of byte ranges of a spooled body read piece by piece.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "core/spool.hpp"

namespace tollgate::cache {

class Digest {
 public:
  Digest();
  ~Digest();
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;

  /// Adds one framed string.
  void add(std::string_view bytes);
  /// Adds `size` bytes of `spool` from `offset`, framed as one string.
  void addSpool(const Spool& spool, std::size_t offset, std::size_t size);
  /// The digest, in lowercase hex; ends the digest.
  std::string hex();

 private:
  void update(std::string_view bytes);

  struct Context;
  std::unique_ptr<Context> ctx_;
};

}  // namespace tollgate::cache
