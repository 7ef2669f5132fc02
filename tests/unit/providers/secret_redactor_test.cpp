#include "providers/secret_redactor.hpp"

#include <gtest/gtest.h>

namespace tollgate::providers {
namespace {

config::Config withKeys(std::initializer_list<std::string> keys) {
  config::Config c;
  config::Model m;
  m.id = "m";
  for (const std::string& k : keys) {
    config::Provider p;
    p.api_key = k;
    m.providers.push_back(p);
  }
  c.models.push_back(m);
  c.provider_secrets = config::providerSecrets(c.models);
  return c;
}

TEST(SecretRedactor, MasksEveryOccurrenceOfEveryKey) {
  const config::Config c = withKeys({"sk-live-0123456789", "other-secret-key"});
  const SecretRedactor r(c);
  std::string text =
      R"({"error":{"message":"Authorization: Bearer sk-live-0123456789 and sk-live-0123456789, )"
      R"(other-secret-key"}})";
  r.redact(text);
  EXPECT_EQ(
      text,
      R"({"error":{"message":"Authorization: Bearer [redacted] and [redacted], [redacted]"}})");
}

TEST(SecretRedactor, MasksTheLongerOfOverlappingKeysWhole) {
  const config::Config c = withKeys({"abcdefgh", "abcdefgh-longer"});
  const SecretRedactor r(c);
  std::string text = "x abcdefgh-longer y abcdefgh";
  r.redact(text);
  EXPECT_EQ(text, "x [redacted] y [redacted]");
}

TEST(SecretRedactor, IgnoresKeysTooShortToSearchFor) {
  const config::Config c = withKeys({"", "short"});
  const SecretRedactor r(c);
  std::string text = "a short text";
  r.redact(text);
  EXPECT_EQ(text, "a short text");
}

}  // namespace
}  // namespace tollgate::providers
