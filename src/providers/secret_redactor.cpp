#include "providers/secret_redactor.hpp"

#include <algorithm>

namespace tollgate::providers {

SecretRedactor::SecretRedactor(const config::Config& config) {
  for (const config::Model& m : config.models) {
    for (const config::Provider& p : m.providers) {
      if (p.api_key.size() >= kMinSecretBytes &&
          std::find(secrets_.begin(), secrets_.end(), p.api_key) == secrets_.end()) {
        secrets_.push_back(p.api_key);
      }
    }
  }
  std::sort(secrets_.begin(), secrets_.end(),
            [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
}

void SecretRedactor::redact(std::string& text) const {
  for (const std::string& secret : secrets_) {
    for (std::size_t at = text.find(secret); at != std::string::npos;
         at = text.find(secret, at + kMask.size())) {
      text.replace(at, secret.size(), kMask);
    }
  }
}

}  // namespace tollgate::providers
