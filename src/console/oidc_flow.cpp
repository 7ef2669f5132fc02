#include "console/oidc_flow.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <charconv>

#include "core/base64.hpp"
#include "core/text.hpp"

namespace tollgate::console {
namespace {

void addParam(std::string& query, std::string_view name, std::string_view value) {
  if (!query.empty()) {
    query += '&';
  }
  query += name;
  query += '=';
  query += text::percentEncode(value);
}

struct ErrorText {
  std::string_view code;
  std::string_view text;
};

constexpr std::array kErrorTexts{
    ErrorText{"sign_in_failed",
              "Signing in did not work. Try again; if it keeps failing, ask your operator."},
    ErrorText{"email_not_verified",
              "Your identity provider has not verified your email address, so it cannot sign you "
              "in here."},
    ErrorText{"email_domain_not_allowed",
              "Your email address is not in a domain this console accepts."},
    ErrorText{"not_invited",
              "There is no account for your email address. Ask a team owner for an invitation, "
              "or your operator to add you."},
    ErrorText{"identity_mismatch",
              "Your email address belongs to an account that signs in as someone else at your "
              "identity provider. Ask your operator to unlink it (tollgate admin users unlink "
              "EMAIL), then sign in again."},
    ErrorText{"email_not_allowed",
              "Addresses at this domain cannot sign in with an identity provider."},
    ErrorText{"identity_provider_unavailable",
              "The identity provider could not be reached. Try again in a moment."},
    ErrorText{"invalid_link",
              "This sign-in link has expired or has already been used: each link works once, "
              "for a limited time. Ask your operator for a new one."},
};

}  // namespace

std::string safeReturnTo(std::string_view r) {
  const bool printable = std::all_of(
      r.begin(), r.end(), [](char c) { return c > ' ' && c < 0x7f && c != '\\' && c != '@'; });
  if (!printable || r.size() > kMaxReturnToBytes || !r.starts_with(kConsoleHome) ||
      r.find("//") != std::string_view::npos) {
    return std::string(kConsoleHome);
  }
  return std::string(r);
}

std::optional<UrlTarget> splitUrl(std::string_view url) {
  const auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) {
    return std::nullopt;
  }
  const boost::urls::url_view u = *parsed;
  UrlTarget t;
  if (u.scheme_id() == boost::urls::scheme::https) {
    t.base.tls = true;
  } else if (u.scheme_id() != boost::urls::scheme::http) {
    return std::nullopt;
  }
  if (u.has_userinfo() || u.encoded_host().empty()) {
    return std::nullopt;
  }
  t.base.host = u.host_type() == boost::urls::host_type::ipv6
                    ? std::string(u.encoded_host_address())
                    : std::string(u.encoded_host());
  t.base.port = u.has_port() ? std::string(u.port()) : (t.base.tls ? "443" : "80");
  t.path = u.encoded_path().empty() ? "/" : std::string(u.encoded_path());
  if (u.has_query()) {
    t.path += '?';
    t.path += u.encoded_query();
  }
  if (text::hasControlCharacters(t.path) || t.path.front() != '/') {
    return std::nullopt;
  }
  return t;
}

std::string discoveryUrl(std::string_view issuer) {
  if (issuer.ends_with('/')) {
    issuer.remove_suffix(1);
  }
  return std::string(issuer) + "/.well-known/openid-configuration";
}

std::string authorizationUrl(const auth::OidcDiscovery& d, const config::Oidc& client,
                             const AuthorizationParams& p) {
  std::string query;
  addParam(query, "response_type", "code");
  addParam(query, "client_id", client.client_id);
  addParam(query, "redirect_uri", p.redirect_uri);
  addParam(query, "scope", "openid email profile");
  addParam(query, "state", p.state);
  addParam(query, "nonce", p.nonce);
  addParam(query, "code_challenge", p.code_challenge);
  addParam(query, "code_challenge_method", "S256");
  const std::string& at = d.authorization_endpoint;
  const char joint = at.find('?') == std::string::npos ? '?' : (at.ends_with('?') ? '\0' : '&');
  std::string url = at;
  if (joint != '\0') {
    url += joint;
  }
  return url + query;
}

ClientAuth clientAuthFor(const auth::OidcDiscovery& d) {
  const auto& m = d.token_endpoint_auth_methods;
  const auto has = [&](std::string_view name) {
    return std::find(m.begin(), m.end(), name) != m.end();
  };
  return !has("client_secret_basic") && has("client_secret_post") ? ClientAuth::Post
                                                                  : ClientAuth::Basic;
}

TokenRequest tokenRequest(const config::Oidc& client, ClientAuth how, std::string_view code,
                          std::string_view redirect_uri, std::string_view code_verifier) {
  TokenRequest t;
  addParam(t.body, "grant_type", "authorization_code");
  addParam(t.body, "code", code);
  addParam(t.body, "redirect_uri", redirect_uri);
  addParam(t.body, "code_verifier", code_verifier);
  t.headers.emplace_back("Accept", "application/json");
  if (how == ClientAuth::Post) {
    addParam(t.body, "client_id", client.client_id);
    addParam(t.body, "client_secret", client.client_secret);
  } else {
    // RFC 6749 §2.3.1: both are form-encoded before they are joined.
    const std::string pair =
        text::percentEncode(client.client_id) + ":" + text::percentEncode(client.client_secret);
    t.headers.emplace_back("Authorization", "Basic " + base64::encode(pair));
  }
  return t;
}

bool emailDomainAllowed(std::string_view email, const std::vector<std::string>& allowed) {
  if (allowed.empty()) {
    return true;
  }
  const std::size_t at = email.rfind('@');
  if (at == std::string_view::npos) {
    return false;
  }
  const std::string domain = text::lowerAscii(email.substr(at + 1));
  return std::find(allowed.begin(), allowed.end(), domain) != allowed.end();
}

std::string_view signInErrorText(std::string_view code) {
  for (const ErrorText& e : kErrorTexts) {
    if (e.code == code) {
      return e.text;
    }
  }
  return {};
}

std::string encodePendingLogin(const PendingLogin& login) {
  return login.state + '\n' + login.nonce + '\n' + login.code_verifier + '\n' + login.return_to +
         '\n' + std::to_string(login.expires_at);
}

std::optional<PendingLogin> decodePendingLogin(std::string_view text) {
  std::array<std::string_view, 5> parts;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::size_t end = i + 1 < parts.size() ? text.find('\n') : text.size();
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    parts[i] = text.substr(0, end);
    text.remove_prefix(i + 1 < parts.size() ? end + 1 : end);
  }
  PendingLogin login{std::string(parts[0]), std::string(parts[1]), std::string(parts[2]),
                     std::string(parts[3])};
  const std::string_view at = parts[4];
  const auto [end, ec] = std::from_chars(at.data(), at.data() + at.size(), login.expires_at);
  if (ec != std::errc() || end != at.data() + at.size() || login.state.empty() ||
      login.nonce.empty() || login.code_verifier.empty() || login.return_to.empty()) {
    return std::nullopt;
  }
  return login;
}

bool constantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace tollgate::console
