// The Authorization header as a client may send it, through the authenticator with a table of
// one key. Invariants: only the exact key (after a case-insensitive Bearer and spaces) is
// accepted; a refusal is a 401 with a known code; no answer repeats the key's secret.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "auth/key_authenticator.hpp"
#include "fuzz_check.hpp"

namespace {

using tollgate::fuzz::check;
namespace auth = tollgate::auth;

constexpr std::string_view kServerSecret = "fuzzing-server-secret-0123456789abcdef";
constexpr std::string_view kPublicId = "AbCdEf012345";
constexpr std::string_view kSecret = "0123456789abcdefghijABCDEFGHIJxy";

const auth::KeyDirectory& directory() {
  static auth::KeyDirectory* dir = [] {
    auto* d = new auth::KeyDirectory();
    d->publish(std::make_shared<auth::KeyTable>(
        std::vector{tollgate::store::KeyGrant{std::string(kPublicId),
                                              auth::toHex(auth::keyedHash(kServerSecret, kSecret)),
                                              "team-id", "team", false, true, true}},
        nullptr));
    return d;
  }();
  return *dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auth::KeyAuthenticator authenticator(directory(), kServerSecret);
  const std::string_view header(reinterpret_cast<const char*>(data), size);
  tollgate::exchange::Caller caller;
  const auto refused = authenticator.authenticate(header, caller);
  const std::string key =
      std::string(auth::kKeyPrefix) + std::string(kPublicId) + "-" + std::string(kSecret);
  if (!refused) {
    check(caller.key_public_id == kPublicId && caller.team == "team");
    check(header.size() > key.size() && header.ends_with(key));
    return 0;
  }
  check(caller.key_public_id.empty());
  check(refused->status() == 401);
  check(tollgate::errorBody(*refused).find(kSecret) == std::string::npos);
  const auto parsed = auth::parseKey(header);
  if (parsed.shape == auth::KeyShape::Ok) {
    check(std::string(auth::kKeyPrefix) + std::string(parsed.public_id) + "-" +
              std::string(parsed.secret) ==
          header);
  }
  return 0;
}
