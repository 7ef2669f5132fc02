// Signing in with the OpenID Connect provider: the start (a redirect to the provider; the
// sign-in's state, nonce, code verifier, return path and expiry sealed in a short-lived cookie,
// nothing in the store) and the callback (the state checked against the cookie, which is cleared,
// the code redeemed (the provider's code serves once), the ID token verified, the person
// admitted, a session opened). A failed sign-in ends on the sign-in page with an error code;
// before the provider vouched for someone it is only counted (SignInGuard), after it its reason
// (never a token) goes to the audit log.

#include "auth/pkce.hpp"
#include "console/handlers.hpp"
#include "console/oidc_client.hpp"
#include "console/oidc_flow.hpp"
#include "core/log.hpp"
#include "http/cookies.hpp"
#include "http/form.hpp"

namespace tollgate::console {
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
  log::line(log::Level::Warn,
            "console sign-in: " + std::string(what) + ": " + text::printable(reason, 300));
}

/// 303 to the sign-in page showing `code`, the login cookie cleared.
http::Response toSignInPage(const config::Console& c, exchange::RequestContext& ctx,
                            std::string_view code) {
  http::Response r{303, "text/plain; charset=utf-8", {}, "not signed in\n"};
  r.header("Location", "/console/signin?error=" + std::string(code));
  r.header("Set-Cookie", http::setCookie(loginCookie(c), "", c.https(), 0));
  r.header("Cache-Control", "no-store");
  r.header("Referrer-Policy", "no-referrer");
  ctx.error_code = std::string(code);
  return r;
}

/// Ends a sign-in refused before the provider vouched for anyone: counted against the source,
/// nothing written; then sent to the sign-in page with `code`.
Awaitable<void> refuse(const ConsoleServices& s, exchange::RequestContext& ctx,
                       const http::Request& req, http::ResponseWriter& out, std::string_view code) {
  co_await s.accounts.signInFailed(std::string(req.source));
  http::Response r = toSignInPage(ctx.config.console, ctx, code);
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

/// Ends a sign-in refused for `p`, its reason in the gateway's log (an operator's clue to a
/// misconfigured client, and never a token): counted against the source unless the provider
/// could not be reached (no fault of the client's).
Awaitable<void> refuse(const ConsoleServices& s, exchange::RequestContext& ctx,
                       const http::Request& req, http::ResponseWriter& out, const OidcProblem& p) {
  logProvider(p.unavailable ? "unavailable" : "refused", p.reason);
  if (p.unavailable) {
    s.accounts.signInUnavailable();
    http::Response r = toSignInPage(ctx.config.console, ctx, codeOf(p));
    co_await out.send(std::move(r));
    co_return;
  }
  co_await refuse(s, ctx, req, out, codeOf(p));
}

/// Ends a sign-in refused for a person the provider vouched for: recorded in the audit log with
/// `reason`, then sent to the sign-in page with `code`.
Awaitable<void> refusePerson(const ConsoleServices& s, exchange::RequestContext& ctx,
                             const http::Request& req, http::ResponseWriter& out,
                             std::string_view code, std::string_view who, std::string_view reason) {
  const std::string actor(who);
  const std::string why(reason);
  const std::string source(req.source);
  co_await s.accounts.recordSignInFailure(actor, why, source);
  http::Response r = toSignInPage(ctx.config.console, ctx, code);
  co_await out.send(std::move(r));
}

/// Refuses (and answers) a start or callback when no provider is configured, or when the
/// caller's source is throttled, before anything reaches the store or the provider.
Awaitable<bool> refusedBeforeProvider(const ConsoleServices& s, const OidcClient* oidc,
                                      exchange::RequestContext& ctx, const http::Request& req,
                                      http::ResponseWriter& out) {
  if (oidc == nullptr) {
    co_await fail(ctx, out, ErrorKind::ResourceNotFound,
                  "no identity provider is configured on this gateway", "");
    co_return true;
  }
  if (const auto wait = s.accounts.signInThrottled(req.source)) {
    co_await throttled(ctx, out, *wait);
    co_return true;
  }
  co_return false;
}

}  // namespace

Awaitable<void> oidcStart(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out) {
  const config::Console& c = ctx.config.console;
  const std::shared_ptr<OidcClient> oidc = s.oidc->clientFor(c);
  if (co_await refusedBeforeProvider(s, oidc.get(), ctx, req, out)) {
    co_return;
  }
  const std::string return_to = safeReturnTo(queryField(req, "return_to"));
  auto d = co_await oidc->discovery();
  if (!d) {
    logProvider("discovery", d.error().reason);
    co_return co_await fail(ctx, out, ErrorKind::IdentityProviderUnavailable,
                            "the identity provider cannot be reached; try again shortly", "");
  }
  const PendingLogin login{auth::randomToken(kStateBytes), auth::randomToken(kStateBytes),
                           auth::newCodeVerifier(), return_to,
                           store::nowMs() + kLoginSeconds * 1000};
  const AuthorizationParams p{redirectUri(c), login.state, login.nonce,
                              auth::codeChallengeS256(login.code_verifier)};
  http::Response r{302, "text/plain; charset=utf-8", {}, "signing in with the identity provider\n"};
  r.header("Location", authorizationUrl(*d, oidc->config(), p));
  r.header("Set-Cookie",
           http::setCookie(loginCookie(c), s.login_sealer->seal(encodePendingLogin(login)),
                           c.https(), kLoginSeconds));
  r.header("Cache-Control", "no-store");
  r.header("Referrer-Policy", "no-referrer");
  co_await out.send(std::move(r));
}

Awaitable<void> oidcCallback(const ConsoleServices& s, exchange::RequestContext& ctx,
                             http::Request& req, http::ResponseWriter& out) {
  const config::Console& c = ctx.config.console;
  const std::shared_ptr<OidcClient> oidc = s.oidc->clientFor(c);
  if (co_await refusedBeforeProvider(s, oidc.get(), ctx, req, out)) {
    co_return;
  }
  const std::string error = queryField(req, "error");
  if (!error.empty()) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed");
  }
  // Login CSRF: the state must be the one this browser was given at the start, sealed in its
  // login cookie (which is cleared whatever happens next).
  const std::string state = queryField(req, "state");
  const auto cookie = http::cookieValue(req.header("Cookie"), loginCookie(c));
  const auto unsealed = cookie ? s.login_sealer->open(*cookie) : std::nullopt;
  const auto login = unsealed ? decodePendingLogin(*unsealed) : std::nullopt;
  if (state.empty() || !login || !constantTimeEquals(state, login->state)) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed");
  }
  if (store::nowMs() >= login->expires_at) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed");
  }
  // RFC 9207: when the provider names itself, it must be ours (a mix-up defence).
  const auto iss = http::formValue(req.query, "iss");
  if (!iss || (*iss && **iss != oidc->config().issuer)) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed");
  }
  const std::string code = queryField(req, "code");
  if (code.empty()) {
    co_return co_await refuse(s, ctx, req, out, "sign_in_failed");
  }
  auto d = co_await oidc->discovery();
  if (!d) {
    co_return co_await refuse(s, ctx, req, out, d.error());
  }
  const std::string redirect = redirectUri(c);
  auto token = co_await oidc->redeem(*d, code, redirect, login->code_verifier);
  if (!token) {
    co_return co_await refuse(s, ctx, req, out, token.error());
  }
  auto claims = co_await oidc->verify(*d, *token, login->nonce);
  if (!claims) {
    co_return co_await refuse(s, ctx, req, out, claims.error());
  }
  if (!emailDomainAllowed(claims->email, c.allowed_email_domains)) {
    co_return co_await refusePerson(s, ctx, req, out, "email_domain_not_allowed", claims->email,
                                    "email domain not allowed");
  }
  const std::string source(req.source);
  accounts::ProviderIdentity who{oidc->config().issuer, claims->sub, claims->email};
  auto opened = co_await s.accounts.openWithProvider(std::move(who), c.allow_signup, source);
  if (!opened) {
    // Refused, and recorded, by openWithProvider.
    const bool mismatch = opened.error().kind == accounts::RefusalKind::Conflict;
    const bool unroutable = opened.error().kind == accounts::RefusalKind::Invalid;
    http::Response r = toSignInPage(c, ctx,
                                    mismatch     ? "identity_mismatch"
                                    : unroutable ? "email_not_allowed"
                                                 : "not_invited");
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
  co_await out.send(std::move(r));
}

}  // namespace tollgate::console
