// The shape of an email address as Tollgate accepts one, wherever it comes from (an admin, an
// invitation, an identity provider's ID token), and its one spelling (lower case).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tollgate::email {

inline constexpr std::size_t kMaxBytes = 254;

/// `address` with its ASCII letters made small, when it is at most kMaxBytes of valid UTF-8 with
/// exactly one `@` between a non-empty local part and a non-empty domain, and no space or control
/// character; nullopt otherwise.
std::optional<std::string> normalize(std::string_view address);

/// True when the domain of `address` (normalized) is one no identity provider can vouch for: it
/// is `localhost`, has no dot, or ends in `.localhost`, `.local`, `.internal`, `.invalid`,
/// `.test` or `.example` (RFC 2606, 6761, 6762). Such addresses are never bound to or signed in
/// through a provider: they name the operator's own accounts (owner@localhost).
bool nonRoutable(std::string_view address);

}  // namespace tollgate::email
