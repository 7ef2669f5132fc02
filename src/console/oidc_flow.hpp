// The pure parts of signing in with an OpenID Connect provider (docs/console-api.md): where the
// browser is sent (the authorization request), what the token request carries, the return path a
// sign-in may end on (never another site), the email domains that may sign in, and the codes a
// failed sign-in shows on the sign-in page. No I/O: oidc_client.hpp does the calls.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "auth/oidc_discovery.hpp"
#include "config/config.hpp"

namespace tollgate::console {

/// The path of the callback the provider sends the browser back to, under `public_url`.
inline constexpr std::string_view kOidcCallbackPath = "/console/api/auth/oidc/callback";
/// Where a sign-in ends when it names no (acceptable) return path.
inline constexpr std::string_view kConsoleHome = "/console/";
/// A return path longer than this is not kept.
inline constexpr std::size_t kMaxReturnToBytes = 512;

/// `return_to` when it is a path of the console (starting /console/, printable ASCII without
/// spaces, backslashes, '@' or a "//"), at most kMaxReturnToBytes; kConsoleHome otherwise. A
/// sign-in never sends the browser to another site.
std::string safeReturnTo(std::string_view return_to);

/// An absolute http(s) URL split for OutboundHttp: the host to connect to and the path (with
/// its query) to ask for. nullopt when it is not one.
struct UrlTarget {
  config::UpstreamUrl base;
  std::string path;  ///< Starts with '/'.
};
std::optional<UrlTarget> splitUrl(std::string_view url);

/// {issuer}/.well-known/openid-configuration (one trailing '/' of the issuer dropped).
std::string discoveryUrl(std::string_view issuer);

/// What one authorization request carries besides the client.
struct AuthorizationParams {
  std::string redirect_uri;
  std::string state;
  std::string nonce;
  std::string code_challenge;  ///< S256 of the sign-in's code verifier.
};

/// The provider's authorization endpoint with the code flow's query (response_type=code, PKCE
/// S256, scope "openid email profile"), appended with '&' when the endpoint has a query already.
std::string authorizationUrl(const auth::OidcDiscovery& d, const config::Oidc& client,
                             const AuthorizationParams& p);

/// How the client authenticates at the token endpoint: HTTP Basic unless the provider lists
/// client_secret_post and not client_secret_basic.
enum class ClientAuth { Basic, Post };
ClientAuth clientAuthFor(const auth::OidcDiscovery& d);

/// The token request: its form body and its headers (Accept, and Authorization for Basic).
struct TokenRequest {
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};
TokenRequest tokenRequest(const config::Oidc& client, ClientAuth how, std::string_view code,
                          std::string_view redirect_uri, std::string_view code_verifier);

/// True when `allowed` is empty, or holds the domain of `email` (compared in lower case).
bool emailDomainAllowed(std::string_view email, const std::vector<std::string>& allowed);

/// What the sign-in page says for a failed sign-in's `error` code; empty for a code it does not
/// know (the page then says nothing of it).
std::string_view signInErrorText(std::string_view code);

/// A sign-in with the provider under way: what its callback checks, carried in the browser's
/// login cookie, sealed (the store keeps nothing of a sign-in until it succeeds).
struct PendingLogin {
  std::string state;
  std::string nonce;
  std::string code_verifier;
  std::string return_to;
  std::int64_t expires_at = 0;  ///< Milliseconds since the Unix epoch.
};

/// The login as one text (its fields hold no line breaks: tokens, and a safeReturnTo path).
std::string encodePendingLogin(const PendingLogin& login);
/// What encodePendingLogin wrote; nullopt for any other text.
std::optional<PendingLogin> decodePendingLogin(std::string_view text);

/// Equal in time that depends on the lengths only.
bool constantTimeEquals(std::string_view a, std::string_view b);

}  // namespace tollgate::console
