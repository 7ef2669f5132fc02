#include "http/form.hpp"

#include "core/text.hpp"

namespace tollgate::http {
namespace {

constexpr int kMaxFields = 64;

std::optional<std::string> decoded(std::string_view raw) {
  std::string plus(raw);
  for (char& c : plus) {
    if (c == '+') {
      c = ' ';
    }
  }
  return text::percentDecode(plus);
}

}  // namespace

Result<std::optional<std::string>> formValue(std::string_view encoded, std::string_view name) {
  for (int fields = 0; !encoded.empty() && fields < kMaxFields; ++fields) {
    const std::size_t amp = encoded.find('&');
    const std::string_view pair = encoded.substr(0, amp);
    encoded = amp == std::string_view::npos ? std::string_view{} : encoded.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    const auto key = decoded(pair.substr(0, eq));
    if (!key || *key != name) {
      continue;
    }
    auto value = decoded(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    if (!value) {
      return Error{ErrorKind::InvalidValue, std::string(name) + " is not properly percent-encoded",
                   std::string(name)};
    }
    return std::optional<std::string>(std::move(*value));
  }
  return std::optional<std::string>();
}

}  // namespace tollgate::http
