#include "core/email.hpp"

#include <algorithm>
#include <array>

#include "core/text.hpp"

namespace tollgate::email {

std::optional<std::string> normalize(std::string_view address) {
  const std::size_t at = address.find('@');
  if (address.size() > kMaxBytes || at == 0 || at == std::string_view::npos ||
      at + 1 == address.size() || address.find('@', at + 1) != std::string_view::npos ||
      address.find(' ') != std::string_view::npos || !text::isValidUtf8(address) ||
      text::hasControlCharacters(address)) {
    return std::nullopt;
  }
  return text::lowerAscii(address);
}

bool nonRoutable(std::string_view address) {
  std::string_view domain = address.substr(address.rfind('@') + 1);
  while (domain.ends_with('.')) {
    domain.remove_suffix(1);  // "localhost." is localhost
  }
  if (domain == "localhost" || domain.find('.') == std::string_view::npos) {
    return true;
  }
  constexpr std::array<std::string_view, 6> kReserved{".localhost", ".local", ".internal",
                                                      ".invalid",   ".test",  ".example"};
  return std::any_of(kReserved.begin(), kReserved.end(),
                     [&](std::string_view suffix) { return domain.ends_with(suffix); });
}

}  // namespace tollgate::email
