// What a client controls of its source and its login cookie: X-Forwarded-For behind trusted
// proxies (address::requestSource, parseCidr, throttleKey) and the sealed login cookie
// (auth::Sealer::open). Invariants: a range contains its own base; an untrusted peer is its own
// source whatever it forwards; a source is the peer, an address in canonical form, or printable
// text; nothing the fuzzer writes opens as a sealed value, and what seal() made opens to itself.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "auth/sealed.hpp"
#include "core/address.hpp"
#include "fuzz_check.hpp"

namespace {

using tollgate::fuzz::check;
namespace address = tollgate::address;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = input.find('\n');
  const std::string_view first = input.substr(0, cut);
  const std::string_view rest = cut == std::string_view::npos ? "" : input.substr(cut + 1);

  if (const auto range = address::parseCidr(first)) {
    check(address::contains(*range, range->base));
  }
  static const std::vector<address::Cidr> trusted{*address::parseCidr("127.0.0.0/8"),
                                                  *address::parseCidr("fd00::/8")};
  check(address::requestSource("203.0.113.1", rest, trusted) == "203.0.113.1");
  const std::string source = address::requestSource("127.0.0.1", rest, trusted);
  check(!source.empty());
  if (const auto ip = address::parseIp(source)) {
    check(address::format(*ip) == source || source == "127.0.0.1");
  }
  check(!address::throttleKey(source).empty());

  static const tollgate::auth::Sealer sealer("a server secret of at least 32 characters",
                                             "oidc-login");
  check(!sealer.open(input));
  check(sealer.open(sealer.seal(input)) == std::string(input));
  return 0;
}
