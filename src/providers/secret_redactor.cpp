#include "providers/secret_redactor.hpp"

#include <algorithm>

namespace tollgate::providers {

void SecretRedactor::redact(std::string& text) const {
  for (const std::string& secret : secrets_) {
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kMask.size())) {
      text.replace(at, secret.size(), kMask);
    }
  }
}

}  // namespace tollgate::providers
