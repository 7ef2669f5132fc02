#include "providers/secret_redactor.hpp"

#include <string.h>  // memmem

namespace tollgate::providers {

namespace {

/// Where `secret` next occurs in `text` from `from`, or npos. glibc's memmem skips ahead by up to
/// the secret's length; std::string::find stops at every occurrence of its first character.
std::size_t nextAt(const std::string& text, const std::string& secret, std::size_t from) {
  const void* at = ::memmem(text.data() + from, text.size() - from, secret.data(), secret.size());
  return at == nullptr ? std::string::npos
                       : static_cast<std::size_t>(static_cast<const char*>(at) - text.data());
}

void redactEach(const std::vector<std::string>& secrets, std::string& text) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) {
      continue;
    }
    for (std::size_t at = nextAt(text, secret, 0); at != std::string::npos;
         at = nextAt(text, secret, at + SecretRedactor::kMask.size())) {
      text.replace(at, secret.size(), SecretRedactor::kMask);
    }
  }
}

}  // namespace

void SecretRedactor::redact(std::string& text) const {
  redactEach(extra_, text);
  redactEach(secrets_, text);
}

}  // namespace tollgate::providers
