#include "providers/bedrock/sigv4.hpp"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/sha.h>

#include <array>
#include <ctime>
#include <string>

#include "core/text.hpp"

namespace tollgate::providers::bedrock::sigv4 {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";

/// SHA-256 and HMAC-SHA256 with their algorithms fetched once per thread: OpenSSL 3's one-shot
/// SHA256() and HMAC() look the algorithm up (under a lock) on every call, which was most of what
/// signing a request cost.
class Crypto {
 public:
  Crypto()
      : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)),
        digest_(EVP_MD_CTX_new()),
        mac_(EVP_MAC_fetch(nullptr, "HMAC", nullptr)),
        hmac_(mac_ != nullptr ? EVP_MAC_CTX_new(mac_) : nullptr) {
    std::array<char, 7> name{"SHA256"};
    const std::array<OSSL_PARAM, 2> params{
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, name.data(), 0),
        OSSL_PARAM_construct_end()};
    ok_ = md_ != nullptr && digest_ != nullptr && hmac_ != nullptr &&
          EVP_MAC_CTX_set_params(hmac_, params.data()) == 1;
  }
  ~Crypto() {
    EVP_MAC_CTX_free(hmac_);
    EVP_MAC_free(mac_);
    EVP_MD_CTX_free(digest_);
    EVP_MD_free(md_);
  }
  Crypto(const Crypto&) = delete;
  Crypto& operator=(const Crypto&) = delete;

  std::array<unsigned char, SHA256_DIGEST_LENGTH> sha256(std::string_view bytes) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> out{};
    if (ok_) {
      EVP_DigestInit_ex2(digest_, md_, nullptr);
      EVP_DigestUpdate(digest_, bytes.data(), bytes.size());
      EVP_DigestFinal_ex(digest_, out.data(), nullptr);
    } else {
      SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out.data());
    }
    return out;
  }

  std::string hmac(std::string_view key, std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> out{};
    std::size_t length = 0;
    if (!ok_ ||
        EVP_MAC_init(hmac_, reinterpret_cast<const unsigned char*>(key.data()), key.size(),
                     nullptr) != 1 ||
        EVP_MAC_update(hmac_, reinterpret_cast<const unsigned char*>(data.data()), data.size()) !=
            1 ||
        EVP_MAC_final(hmac_, out.data(), &length, out.size()) != 1) {
      std::array<char, 7> name{"SHA256"};
      EVP_Q_mac(nullptr, "HMAC", nullptr, name.data(), nullptr, key.data(), key.size(),
                reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(),
                out.size(), &length);
    }
    return {reinterpret_cast<const char*>(out.data()), length};
  }

 private:
  EVP_MD* md_;
  EVP_MD_CTX* digest_;
  EVP_MAC* mac_;
  EVP_MAC_CTX* hmac_;
  bool ok_ = false;
};

Crypto& crypto() {
  thread_local Crypto c;
  return c;
}

/// The raw HMAC-SHA256 of `data` under `key`.
std::string hmac(std::string_view key, std::string_view data) { return crypto().hmac(key, data); }

/// The signing key of `secret` for `scope`'s day, region and service, kept per thread: it
/// changes once a day, and deriving it is four HMACs.
const std::string& signingKey(std::string_view secret, const Scope& scope) {
  struct Derived {
    std::string secret, day, region, service, key;
  };
  thread_local Derived last;
  const std::string_view day = scope.amz_date.substr(0, 8);
  if (last.key.empty() || last.secret != secret || last.day != day || last.region != scope.region ||
      last.service != scope.service) {
    const std::string k_date = hmac("AWS4" + std::string(secret), day);
    const std::string k_region = hmac(k_date, scope.region);
    const std::string k_service = hmac(k_region, scope.service);
    last = Derived{std::string(secret), std::string(day), std::string(scope.region),
                   std::string(scope.service), hmac(k_service, "aws4_request")};
  }
  return last.key;
}

std::string credentialScope(const Scope& scope) {
  return std::string(scope.amz_date.substr(0, 8)) + "/" + std::string(scope.region) + "/" +
         std::string(scope.service) + "/aws4_request";
}

}  // namespace

std::string sha256Hex(std::string_view bytes) {
  const auto digest = crypto().sha256(bytes);
  return text::hex(digest);
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
  const std::string mac = hmac(signingKey(secret, scope), string_to_sign);
  return text::hex({reinterpret_cast<const std::uint8_t*>(mac.data()), mac.size()});
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
