// A Cookie header and a query string or form body as a client may send them, through
// http::cookieValue and http::formValue (the console's session and login cookies, the OIDC
// callback's query, the sign-in form). Invariants: a cookie's value is a piece of the header
// holding no ';'; a name that is not in the header is never found; a decoded form value, encoded
// again, decodes to itself; what setCookie writes reads back.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "http/cookies.hpp"
#include "http/form.hpp"

namespace {

using tollgate::fuzz::check;
namespace http = tollgate::http;

constexpr std::string_view kNames[] = {
    "tollgate_session", "__Host-tollgate_login", "state", "code", "token", "a"};

std::string encoded(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : value) {
    const auto b = static_cast<unsigned char>(c);
    const bool plain = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
                       b == '-' || b == '.' || b == '_' || b == '~';
    if (plain) {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 0xF];
    }
  }
  return out;
}

bool cookieSafe(std::string_view v) {
  for (const char c : v) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= ' ' || b == ';' || b == '"' || b == 0x7f) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  for (const std::string_view name : kNames) {
    if (const auto v = http::cookieValue(input, name)) {
      check(input.find(name) != std::string_view::npos);
      check(v->empty() ||
            (v->data() >= input.data() && v->data() + v->size() <= input.data() + input.size()));
      check(v->find(';') == std::string_view::npos);
    }
    const auto field = http::formValue(input, name);
    if (field && *field) {
      const std::string again = std::string(name) + "=" + encoded(**field);
      const auto back = http::formValue(again, name);
      check(back && *back && **back == **field);
    }
  }
  // What the gateway sets reads back, beside whatever else the browser holds.
  if (cookieSafe(input)) {
    const std::string set = http::setCookie("tollgate_session", input, true, 60);
    const std::string header = "other=1; " + set.substr(0, set.find(';'));
    const auto back = http::cookieValue(header, "tollgate_session");
    check(back && *back == input);
  }
  return 0;
}
