// Any bytes as a JWKS document, then a fixed token (signed by a key of the corpus's JWKS) verified
// against the keys kept. Invariants: nothing crashes; a JWKS that is kept came from at most
// 256 KiB and has 1 to 32 keys; a refusal's message is valid UTF-8 and says something; the token
// verifies only with its kid kept.
#include <cstdint>
#include <string>
#include <string_view>

#include "auth/id_token.hpp"
#include "auth/jwks.hpp"
#include "core/text.hpp"
#include "fuzz_check.hpp"

namespace {

using tollgate::fuzz::check;
namespace auth = tollgate::auth;

// An ES256 token signed by the key "fuzz-ec" of corpus/fuzz_jwks/good: it verifies only when that
// key was kept.
constexpr std::string_view kToken =
    "eyJhbGciOiJFUzI1NiIsImtpZCI6ImZ1enotZWMifQ.eyJpc3MiOiJodHRwczovL2lkcC5leGFtcGxlIiwic3ViI"
    "joiMjQ4Mjg5NzYxMDAxIiwiYXVkIjoidG9sbGdhdGUtY29uc29sZSIsImV4cCI6MTcwMDAwMDYwMCwiaWF0IjoxN"
    "zAwMDAwMDAwLCJub25jZSI6Im4tMFM2X1d6QTJNaiIsImVtYWlsIjoiSmFuZS5Eb2VARXhhbXBsZS5DT00iLCJlb"
    "WFpbF92ZXJpZmllZCI6dHJ1ZSwibmFtZSI6IkphbmUgRG9lIn0.C_QsNZgYJU2u4qK2-kmRr1omoSLMRv28ptkqb"
    "R35LLp744vqHt-qK4Vg6c4ccl7IvWe5jkeob4vQKxe1db7dAw";

const auth::IdTokenExpect kExpect{"https://idp.example", "tollgate-console", "n-0S6_WzA2Mj",
                                  1'700'000'000, 60};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  const auto jwks = auth::parseJwks(json);
  if (!jwks) {
    check(!jwks.error().empty() && tollgate::text::isValidUtf8(jwks.error()));
    return 0;
  }
  check(json.size() <= auth::kMaxJwksBytes);
  check(jwks->size() >= 1 && jwks->size() <= auth::kMaxJwksKeys);
  const auto claims = auth::verifyIdToken(kToken, *jwks, kExpect);
  check(!claims || jwks->find("fuzz-ec", auth::JwsAlg::Es256) != nullptr);
  return 0;
}
