// Keeps provider credentials out of everything the gateway relays: an upstream (or a proxy in
// front of it) may echo our request headers in an error message, a completion or a stream event.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"

namespace tollgate::providers {

class SecretRedactor {
 public:
  /// Secrets shorter than this are not searched for: they would match ordinary text.
  static constexpr std::size_t kMinSecretBytes = 8;
  static constexpr std::string_view kMask = "[redacted]";

  /// Collects every configured provider's api_key.
  explicit SecretRedactor(const config::Config& config);

  /// Replaces every occurrence of a secret in `text` by kMask.
  void redact(std::string& text) const;

 private:
  std::vector<std::string> secrets_;  ///< Longest first, so no secret is masked half-way.
};

}  // namespace tollgate::providers
