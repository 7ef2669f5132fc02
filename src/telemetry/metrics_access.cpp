#include "telemetry/metrics_access.hpp"

#include <openssl/crypto.h>

#include "core/address.hpp"
#include "core/text.hpp"

namespace tollgate::telemetry {
namespace {

constexpr std::string_view kBearer = "bearer ";

bool bearsToken(const std::string& token, std::string_view authorization) {
  if (token.empty() || authorization.size() <= kBearer.size() ||
      !text::equalsIgnoreCase(authorization.substr(0, kBearer.size()), kBearer)) {
    return false;
  }
  const std::string_view presented = authorization.substr(kBearer.size());
  return presented.size() == token.size() &&
         CRYPTO_memcmp(presented.data(), token.data(), token.size()) == 0;
}

}  // namespace

bool mayScrape(const config::Metrics& m, std::string_view source, std::string_view authorization) {
  if (bearsToken(m.token, authorization)) {
    return true;
  }
  const auto ip = address::parseIp(source);
  return ip && address::containsAny(m.allow, *ip);
}

}  // namespace tollgate::telemetry
