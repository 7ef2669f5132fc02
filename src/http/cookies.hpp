// Cookies as the console uses them (RFC 6265): reading one cookie's value out of a request's
// Cookie header, and writing a Set-Cookie value with the attributes a session cookie needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tollgate::http {

/// The value of the cookie named `name` in a Cookie header ("a=1; b=2"); nullopt when there is
/// none, or more than one: a browser sends every cookie whose domain and path match, so a second
/// one may have been planted by a sibling host (RFC 6265 §8.6) and neither can be trusted. Every
/// pair is read (the header is bounded by the gateway's header limit); pairs without '=' are
/// skipped.
std::optional<std::string_view> cookieValue(std::string_view header, std::string_view name);

/// A Set-Cookie value: `name=value; Path=/; Max-Age=N; HttpOnly; SameSite=Lax`, with `Secure`
/// when `secure`. A Max-Age of 0 removes the cookie.
std::string setCookie(std::string_view name, std::string_view value, bool secure,
                      std::int64_t max_age_seconds);

}  // namespace tollgate::http
