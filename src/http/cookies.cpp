#include "http/cookies.hpp"

#include "core/text.hpp"

namespace tollgate::http {

std::optional<std::string_view> cookieValue(std::string_view header, std::string_view name) {
  std::optional<std::string_view> found;
  while (!header.empty()) {
    const std::size_t end = header.find(';');
    const std::string_view pair = text::trimOws(header.substr(0, end));
    header = end == std::string_view::npos ? std::string_view{} : header.substr(end + 1);
    const std::size_t eq = pair.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    if (text::trimOws(pair.substr(0, eq)) == name) {
      std::string_view value = text::trimOws(pair.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      if (found) {
        return std::nullopt;
      }
      found = value;
    }
  }
  return found;
}

std::string setCookie(std::string_view name, std::string_view value, bool secure,
                      std::int64_t max_age_seconds) {
  std::string out;
  out.reserve(name.size() + value.size() + 64);
  out.append(name).append("=").append(value);
  out.append("; Path=/; Max-Age=").append(std::to_string(max_age_seconds));
  out.append("; HttpOnly; SameSite=Lax");
  if (secure) {
    out.append("; Secure");
  }
  return out;
}

}  // namespace tollgate::http
