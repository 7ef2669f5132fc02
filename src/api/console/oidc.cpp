// Signing in with the OpenID Connect provider: the start (a redirect to the provider, the
// sign-in's state in a short-lived cookie and its nonce and code verifier in the store) and the
// callback (the state checked against the cookie and used once, the code redeemed, the ID token
// verified, the person admitted, a session opened). A failed sign-in ends on the sign-in page
// with an error code, and its reason (never a token) goes to the audit log.
#include <cstdio>

#include "api/console/handlers.hpp"
#include "api/console/oidc_client.hpp"
#include "api/console/oidc_flow.hpp"
#include "auth/pkce.hpp"
#include "http/cookies.hpp"
#include "http/form.hpp"

namespace tollgate::api::console {
namespace {

/// How long a sign-in may stay at the provider.
constexpr std::int64_t kLoginSeconds = 600;
/// Bytes of randomness in a state and a nonce.
constexpr std::size_t kStateBytes = 32;

std::string loginCookie(const config::Console& c) {
  return c.https() ? "__Host-tollgate_login" : "tollgate_login";
}

std::string redirectUri(const config::Console& c) {
  return c.public_url + std::string(kOidcCallbackPath);
}

/// A query field, or empty when it is absent or not well encoded.
std::string queryField(const http::Request& req, std::string_view name) {
  auto v = http::formValue(req.query, name);
  return v && *v ? **v : std::string();
}

void logProvider(std::string_view what, const std::string& reason) {
  std::fprintf(stderr, "tollgate: console sign-in: %.*s: %s\n", static_cast<int>(what.size()),
               what.data(), text::printable(reason, 300).c_str());
}

/// 303 to the sign-in page showing `code`, the login cookie cleared.
http::Response toSignInPage(const config::Console& c, exchange::RequestContext& ctx,
                            std::string_view code) {
  http::Response r{303, "text/plain; charset=utf-8", {}, "not signed in\n"};
  r.header("Location", "/console/signin?error=" + std::string(code));
  r.header("Set-Cookie", http::setCookie(loginCookie(c), "", c.https(), 0));
  r.header("Cache-Control", "no-store");
  r.header("Referrer-Policy", "no-referrer");
  ctx.status = r.status;
  ctx.error_code = std::string(code);
  return r;
}

/// Ends a refused sign-in: recorded in the audit log with `reason` (and `who`, when known),
/// then sent to the sign-in page with `code`.
Awaitable<void> refuse(const ConsoleServices& s, exchange::RequestContext& ctx,
                       const http::Request& req, http::ResponseWriter& out, std::string_view code,
                       std::string_view who, std::string_view reason) {
  const std::string actor(who);
  const std::string why(reason);
  const std::string source(req.peer);
  co_await s.accounts.recordSignInFailure(actor, why, source);
  http::Response r = toSignInPage(s.config.console, ctx, code);
  co_await out.send(std::move(r));
}

/// The code the sign-in page shows for a problem with the provider.
std::string_view codeOf(const OidcProblem& p) {
  if (p.unavailable) {
    return "identity_provider_unavailable";
  }
  if (p.token_failure == auth::IdTokenFailure::EmailUnverified) {
    return "email_not_verified";
  }
  return "sign_in_failed";
}

}  // namespace

Awaitable<void> oidcStart(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out) {
  const config::Console& c = s.config.console;
  if (!s.oidc) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound,
                            "no identity provider is configured on this gateway", "");
  }
  const std::string return_to = safeReturnTo(queryField(req, "return_to"));
  auto d = co_await s.oidc->discovery();
  if (!d) {
    logProvider("discovery", d.error().reason);
    co_return co_await fail(ctx, out, ErrorKind::IdentityProviderUnavailable,
                            "the identity provider cannot be reached; try again shortly", "");
  }
  const std::string state = auth::randomToken(kStateBytes);
  const std::string verifier = auth::newCodeVerifier();
  const store::OidcLogin login{auth::randomToken(kStateBytes), verifier, return_to,
                               store::nowMs() + kLoginSeconds * 1000};
  co_await s.accounts.beginOidcLogin(state, login);
  const AuthorizationParams p{redirectUri(c), state, login.nonce,
                              auth::codeChallengeS256(verifier)};
  http::Response r{302, "text/plain; charset=utf-8", {}, "signing in with the identity provider\n"};
  r.header("Location", authorizationUrl(*d, s.oidc->config(), p));
  r.header("Set-Cookie", http::setCookie(loginCookie(c), state, c.https(), kLoginSeconds));
  r.header("Cache-Control", "no-store");
  r.header("Referrer-Policy", "no-referrer");
  ctx.status = r.status;
  co_await out.send(std::move(r));
}

Awaitable<void> oidcCallback(const ConsoleServices& s, exchange::RequestContext& ctx,
                             http::Request& req, http::ResponseWriter& out) {
  const config::Console& c = s.config.console;
  if (!s.oidc) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound,
                            "no identity provider is configured on this gateway", "");
  }
  const std::string error = queryField(req, "error");
  if (!error.empty()) {
    const std::string reason = "identity provider: " + text::printable(error, 64);
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed", "", reason);
  }
  // Login CSRF: the state must be the one this browser was given at the start.
  const std::string state = queryField(req, "state");
  const auto cookie = http::cookieValue(req.header("Cookie"), loginCookie(c));
  if (state.empty() || !cookie || !constantTimeEquals(state, *cookie)) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed", "",
                              "state does not match this browser's sign-in");
  }
  auto login = co_await s.accounts.takeOidcLogin(state);
  if (!login) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed", "",
                              "state unknown or used already");
  }
  if (store::nowMs() >= login->expires_at) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed", "", "sign-in took too long");
  }
  // RFC 9207: when the provider names itself, it must be ours (a mix-up defence).
  const auto iss = http::formValue(req.query, "iss");
  if (!iss || (*iss && **iss != s.oidc->config().issuer)) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed", "",
                              "iss parameter is not the issuer");
  }
  const std::string code = queryField(req, "code");
  if (code.empty()) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed", "", "no code");
  }
  auto d = co_await s.oidc->discovery();
  if (!d) {
    logProvider("discovery", d.error().reason);
    co_return co_await refuse(s, ctx, req, out, codeOf(d.error()), "", d.error().reason);
  }
  const std::string redirect = redirectUri(c);
  auto token = co_await s.oidc->redeem(*d, code, redirect, login->code_verifier);
  if (!token) {
    if (token.error().unavailable) {
      logProvider("token", token.error().reason);
    }
    co_return co_await refuse(s, ctx, req, out, codeOf(token.error()), "", token.error().reason);
  }
  auto claims = co_await s.oidc->verify(*d, *token, login->nonce);
  if (!claims) {
    if (claims.error().unavailable) {
      logProvider("keys", claims.error().reason);
    }
    co_return co_await refuse(s, ctx, req, out, codeOf(claims.error()), "", claims.error().reason);
  }
  if (!emailDomainAllowed(claims->email, c.allowed_email_domains)) {
    co_return co_await refuse(s, ctx, req, out, "email_domain_not_allowed", claims->email,
                              "email domain not allowed");
  }
  const std::string source(req.peer);
  auto opened = co_await s.accounts.openWithProvider(claims->email, c.allow_signup, source);
  if (!opened) {
    // Refused, and recorded, by openWithProvider.
    http::Response r = toSignInPage(c, ctx, "not_invited");
    co_await out.send(std::move(r));
    co_return;
  }
  const std::int64_t max_age = (opened->expires_at - store::nowMs()) / 1000;
  http::Response r{303, "text/plain; charset=utf-8", {}, "signed in\n"};
  r.header("Location", login->return_to);
  r.header("Set-Cookie", sessionCookieValue(c, opened->id, max_age));
  r.header("Set-Cookie", http::setCookie(loginCookie(c), "", c.https(), 0));
  r.header("Cache-Control", "no-store");
  r.header("Referrer-Policy", "no-referrer");
  ctx.status = r.status;
  co_await out.send(std::move(r));
}

}  // namespace tollgate::api::console
