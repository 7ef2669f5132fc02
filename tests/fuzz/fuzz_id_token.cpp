// Any bytes as an ID token, verified against a fixed JWKS (one RSA and one P-256 key; the seed
// corpus holds a good token signed by each). Invariants: nothing crashes; an accepted token is at
// most 16 KiB of three dot-separated segments whose header names RS256 or ES256 without crit,
// and its claims are a subject, a lower-case address and a verified email.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/id_token.hpp"
#include "core/base64.hpp"
#include "core/email.hpp"
#include "fuzz_check.hpp"

namespace {

using tollgate::fuzz::check;
namespace auth = tollgate::auth;

// The public halves of the keys that signed the corpus's tokens.
constexpr std::string_view kJwks =
    "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"fuzz-rsa\",\"e\":\"AQAB\",\"n\":"
    "\"pHNoZC3CmSyQHqE11WyxAQ7E-SV7C2roO"
    "UNg4RF4ODXYpX6zEYMe7xuA2fvVbMMhL1KYZazMgmwKrUR66_3k_rnp-yum9-IW24tVzC7SK2jaGDSAg1LXBFPcQ"
    "mcc4Lp9IinnBGL2QEk0US6w1I-BPflx_SJe14dKjimUEzxyeo_tuLR2uoV8fkixLusrzFlnDr39vf07aDkTSjYmF"
    "sfbNS2BdiOaDl579UUieP4ba5i2CK-Ps0D-eSUnLl5ajkDPCVTsltqY_ZVifzb5P5zNAa6aLIBqRR01hGQcWZZoC"
    "MzYlr82IdUJkivaRymNeq39DZ1c8174VM9LcIO9nC8Gqw\"},{\"kty\":\"EC\",\"kid\":\"fuzz-ec\",\"crv\":"
    "\"P-256"
    "\",\"x\":\"763fhrA1DcGAYYaRO4VijX0iLRXMYn0uJJsC23FHIn8\",\"y\":"
    "\"MH4q3j9MesPtXJaUiRxGW7wRgskMXgy"
    "xVGaD0UWIV_Y\"}]}";

const auth::Jwks& jwks() {
  static const auth::Jwks* keys = new auth::Jwks(std::move(auth::parseJwks(kJwks)).value());
  return *keys;
}

// What the corpus's tokens say, at the time they were issued.
const auth::IdTokenExpect kExpect{"https://idp.example", "tollgate-console", "n-0S6_WzA2Mj",
                                  1'700'000'000, 60};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view token(reinterpret_cast<const char*>(data), size);
  const auto claims = auth::verifyIdToken(token, jwks(), kExpect);
  if (!claims) {
    check(!auth::failureName(claims.error()).empty());
    return 0;
  }
  check(token.size() <= auth::kMaxIdTokenBytes);
  check(std::count(token.begin(), token.end(), '.') == 2);
  const auto header = tollgate::base64::decodeUrl(token.substr(0, token.find('.')));
  check(header && (header->find("\"RS256\"") != std::string::npos ||
                   header->find("\"ES256\"") != std::string::npos));
  check(header->find("\"crit\"") == std::string::npos);
  check(!claims->sub.empty() && claims->email_verified);
  check(tollgate::email::normalize(claims->email) == claims->email);
  return 0;
}
