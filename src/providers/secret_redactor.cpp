#include "providers/secret_redactor.hpp"

#include <algorithm>

namespace tollgate::providers {

namespace {

void redactEach(const std::vector<std::string>& secrets, std::string& text) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) {
      continue;
    }
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + SecretRedactor::kMask.size())) {
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
