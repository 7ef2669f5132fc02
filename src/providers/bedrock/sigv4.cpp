#include "providers/bedrock/sigv4.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include <array>
#include <ctime>

#include "core/text.hpp"

namespace tollgate::providers::bedrock::sigv4 {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

std::string hex(const unsigned char* bytes, std::size_t n) {
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  out.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4U];
    out += kHex[bytes[i] & 0xFU];
  }
  return out;
}

/// The raw HMAC-SHA256 of `data` under `key`.
std::string hmac(std::string_view key, std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac.data(), &length);
  return {reinterpret_cast<const char*>(mac.data()), length};
}

std::string credentialScope(const Scope& scope) {
  return std::string(scope.amz_date.substr(0, 8)) + "/" + std::string(scope.region) + "/" +
         std::string(scope.service) + "/aws4_request";
}

}  // namespace

std::string sha256Hex(std::string_view bytes) {
  std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest.data());
  return hex(digest.data(), digest.size());
}

std::string amzDate(std::chrono::system_clock::time_point time) {
  const std::time_t t = std::chrono::system_clock::to_time_t(time);
  std::tm utc{};
  gmtime_r(&t, &utc);
  std::array<char, 20> out{};
  const std::size_t n = std::strftime(out.data(), out.size(), "%Y%m%dT%H%M%SZ", &utc);
  return {out.data(), n};
}

std::string canonicalUri(std::string_view path) {
  if (path.empty()) {
    return "/";
  }
  std::string out;
  out.reserve(path.size() + path.size() / 2);
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    out += text::percentEncode(path.substr(start, end - start));
    if (slash == std::string_view::npos) {
      break;
    }
    out += '/';
    start = slash + 1;
  }
  return out;
}

std::string signedHeaders(const Request& r) {
  std::string out;
  for (const auto& [name, value] : r.headers) {
    out += out.empty() ? "" : ";";
    out += name;
  }
  return out;
}

std::string canonicalRequest(const Request& r) {
  std::string out;
  out.append(r.method).append("\n");
  out.append(r.canonical_uri).append("\n");
  out.append(r.canonical_query).append("\n");
  for (const auto& [name, value] : r.headers) {
    out.append(name).append(":").append(value).append("\n");
  }
  out.append("\n").append(signedHeaders(r)).append("\n");
  out.append(r.payload_hash);
  return out;
}

std::string stringToSign(const Scope& scope, std::string_view canonical_request) {
  std::string out(kAlgorithm);
  out.append("\n").append(scope.amz_date).append("\n");
  out.append(credentialScope(scope)).append("\n");
  out.append(sha256Hex(canonical_request));
  return out;
}

std::string signature(std::string_view secret, const Scope& scope,
                      std::string_view string_to_sign) {
  const std::string k_date = hmac("AWS4" + std::string(secret), scope.amz_date.substr(0, 8));
  const std::string k_region = hmac(k_date, scope.region);
  const std::string k_service = hmac(k_region, scope.service);
  const std::string k_signing = hmac(k_service, "aws4_request");
  const std::string mac = hmac(k_signing, string_to_sign);
  return hex(reinterpret_cast<const unsigned char*>(mac.data()), mac.size());
}

std::string authorization(std::string_view access_key_id, const Scope& scope,
                          std::string_view signed_headers, std::string_view signature) {
  std::string out(kAlgorithm);
  out.append(" Credential=").append(access_key_id).append("/").append(credentialScope(scope));
  out.append(", SignedHeaders=").append(signed_headers);
  out.append(", Signature=").append(signature);
  return out;
}

}  // namespace tollgate::providers::bedrock::sigv4
