#include "core/email.hpp"

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

}  // namespace tollgate::email
