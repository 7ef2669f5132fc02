// Keeps provider credentials out of everything the gateway relays: an upstream (or a proxy in
// front of it) may echo our request headers in an error message, a completion or a stream event.
#pragma once

#include <string>
#include <vector>

#include "config/config.hpp"

namespace tollgate::providers {

class SecretRedactor {
 public:
  static constexpr std::string_view kMask = "[redacted]";

  /// Every api_key of `config`'s providers (config::Config::provider_secrets), which must
  /// outlive the redactor: one is made for each exchange from the configuration it pinned.
  explicit SecretRedactor(const config::Config& config) : secrets_(config.provider_secrets) {}
  explicit SecretRedactor(const config::Config&& config) = delete;

  /// Also redacts `secrets` (an Exchange's sentSecrets()), which may be empty.
  void learn(std::vector<std::string> secrets) { extra_ = std::move(secrets); }

  /// Replaces every occurrence of a secret in `text` by kMask.
  void redact(std::string& text) const;

 private:
  const std::vector<std::string>& secrets_;  ///< Longest first.
  std::vector<std::string> extra_;
};

}  // namespace tollgate::providers
