// The sign-in page, signing in with a one-time link, signing out, and who is signed in
// (GET /console/api/me).
#include "console/assets.hpp"
#include "console/handlers.hpp"
#include "console/oidc_flow.hpp"
#include "core/text.hpp"
#include "http/cookies.hpp"
#include "http/form.hpp"

namespace tollgate::console {
namespace {

/// The console's invitation page, where a link to accept an invitation leads.
constexpr std::string_view kInvitePage = "/console/invite";

/// What the sign-in page is asked to show besides its token.
struct SignInPage {
  bool oidc = false;            ///< An identity provider is configured.
  std::string_view error_text;  ///< After a failed sign-in, what went wrong.
  bool ended = false;           ///< The console sent here a browser whose session ended.
  std::string return_to;        ///< A safeReturnTo path: where the provider's sign-in ends.
};

/// The sign-in page: with a sign-in link's token, one button that signs in with a POST, so that
/// mail scanners and link previews, which only GET, never use the token up; with an identity
/// provider, a link that starts signing in with it (and comes back to `return_to`); after a
/// failed sign-in, what went wrong; for a session that ended, that it did and how to sign in again.
std::string signInPage(std::string_view token, const SignInPage& p) {
  std::string html =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
      "content=\"width=device-width, initial-scale=1\"><title>Sign in to Tollgate</title>";
  // The console's stylesheet (its name is the build's: nothing to escape); no inline style, so
  // the page keeps the console's strict Content-Security-Policy.
  if (const Asset* style = firstWithExtension(builtAssets(), ".css")) {
    html.append("<link rel=\"stylesheet\" href=\"/console/assets/").append(style->name);
    html += "\">";
  }
  html += "</head><body><main class=\"signin\">";
  html += p.ended ? "<h1>Your session ended</h1>" : "<h1>Tollgate</h1>";
  if (!p.error_text.empty()) {
    // A fixed text of oidc_flow's, chosen by a known code: nothing of the query is shown.
    html += "<p class=\"error\">";
    html += p.error_text;
    html += "</p>";
  }
  if (!token.empty()) {
    // The token's characters are checked by the caller: base62 and '-', nothing to escape.
    html +=
        "<p>Sign in to the console in this browser.</p><form method=\"post\" "
        "action=\"/console/api/auth/link\"><input type=\"hidden\" name=\"token\" value=\"";
    html += token;
    html += "\"><button type=\"submit\">Sign in</button></form>";
  }
  // An invitation's page sent here someone not signed in: an invitation never signs anyone in.
  const bool invited = p.return_to == kInvitePage;
  if (p.ended && token.empty()) {
    html +=
        "<p>Signed-in sessions end after a while without use, and some time after signing in. "
        "Sign in again to go back to the page you were on.</p>";
  } else if (invited && token.empty()) {
    html +=
        "<p>You have an invitation to a team. An invitation does not sign you in: sign in first, "
        "and the invitation opens again.</p>";
  }
  if (p.oidc) {
    // Percent-encoded: nothing of the path is left to escape in the attribute.
    html += "<p><a href=\"/console/api/auth/oidc/start";
    if (p.return_to != kConsoleHome) {
      html.append("?return_to=").append(text::percentEncode(p.return_to));
    }
    html += "\">Sign in with your identity provider</a></p>";
  } else if ((p.ended || invited) && token.empty()) {
    html +=
        "<p>Sign in with a sign-in link from your operator (they make one with "
        "<code>tollgate admin login-link EMAIL</code>).</p>";
  } else if (token.empty()) {
    html +=
        "<p>You are not signed in. Open a sign-in link from your operator (they make one with "
        "<code>tollgate admin login-link EMAIL</code>); a link that was cut short does not "
        "work either.</p>";
  }
  return html + "</main></body></html>";
}

bool linkShaped(std::string_view token) {
  if (token.size() > 64) {
    return false;
  }
  for (const char c : token) {
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) {
      return false;
    }
  }
  return true;
}

void writeMe(json::Writer& w, const Caller& who, const std::string& csrf, std::int64_t expires,
             const std::vector<accounts::TeamRole>& teams, const config::Console& c) {
  w.startObject();
  w.key("user");
  w.startObject();
  w.field("id", who.user.id);
  w.field("email", who.user.email);
  w.field("name", who.user.name);
  w.endObject();
  w.field("csrf_token", csrf);
  accounts::timeField(w, "session_expires_at", expires);
  w.key("teams");
  w.startArray();
  for (const accounts::TeamRole& t : teams) {
    w.startObject();
    w.field("id", t.team.id);
    w.field("name", t.team.name);
    w.field("state", t.team.state);
    w.field("role", accounts::roleName(t.role));
    w.key("actions");
    w.startArray();
    for (const accounts::Action a : accounts::kActions) {
      if (accounts::allowed(t.role, a)) {
        w.string(accounts::actionName(a));
      }
    }
    w.endArray();
    w.endObject();
  }
  w.endArray();
  // The roles whose keys work: a key stops when its creator's role is not one of them.
  w.key("key_roles");
  w.startArray();
  for (const std::string& role : accounts::rolesAllowed(accounts::Action::CreateKey)) {
    w.string(role);
  }
  w.endArray();
  w.key("sign_in");
  w.startObject();
  w.field("oidc", c.oidc.has_value());
  w.field("links", c.login_links);
  w.endObject();
  w.endObject();
}

}  // namespace

Awaitable<void> signInPage(const ConsoleServices&, exchange::RequestContext& ctx,
                           http::Request& req, http::ResponseWriter& out) {
  const auto token = http::formValue(req.query, "token");
  const std::string shown = token && *token && linkShaped(**token) ? **token : std::string();
  const auto error = http::formValue(req.query, "error");
  const auto ended = http::formValue(req.query, "ended");
  const auto return_to = http::formValue(req.query, "return_to");
  const SignInPage p{
      .oidc = ctx.config.console.oidc.has_value(),
      .error_text = error && *error ? signInErrorText(**error) : std::string_view(),
      .ended = ended && *ended,
      .return_to = safeReturnTo(return_to && *return_to ? std::string_view(**return_to) : ""),
  };
  http::Response page{200, "text/html; charset=utf-8", {}, signInPage(shown, p)};
  page.header("Cache-Control", "no-store");
  addPageHeaders(page);
  co_await out.send(std::move(page));
}

Awaitable<void> signInWithLink(const ConsoleServices& s, exchange::RequestContext& ctx,
                               http::Request& req, http::ResponseWriter& out) {
  const config::Console& c = ctx.config.console;
  if (!c.login_links) {
    co_return co_await fail(ctx, out, ErrorKind::SignInFailed,
                            "sign-in links are off on this gateway", "");
  }
  // Login CSRF: a page elsewhere must not sign this browser in as someone else.
  if (!sameOrigin(c, req)) {
    co_return co_await fail(ctx, out, ErrorKind::CsrfFailed,
                            "signing in must come from the console's own origin (Origin header)",
                            "");
  }
  if (const auto wait = s.accounts.signInThrottled(req.source)) {
    co_return co_await throttled(ctx, out, *wait);
  }
  const bool form =
      text::isMediaType(req.header("Content-Type"), "application/x-www-form-urlencoded");
  std::string token;
  if (form) {
    auto field = http::formValue(*req.body, "token");
    if (!field) {
      co_return co_await fail(ctx, out, field.error());
    }
    token = field->value_or("");
  } else {
    auto body = jsonBody(req, {.required = {"token"}});
    if (!body) {
      co_return co_await fail(ctx, out, body.error());
    }
    token = stringOf(*body, "token").value_or("");
  }
  auto opened = co_await s.accounts.redeemLoginLink(token, std::string(req.source));
  if (!opened) {
    if (form) {
      // The sign-in page's own form: back to the page, which says what went wrong, rather than
      // a JSON error in the browser's window.
      http::Response back{303, "text/plain; charset=utf-8", {}, "sign-in link not valid\n"};
      back.header("Location", "/console/signin?error=invalid_link");
      back.header("Cache-Control", "no-store");
      co_await out.send(std::move(back));
      co_return;
    }
    co_return co_await fail(ctx, out, ErrorKind::SignInFailed, opened.error().message, "token");
  }
  const std::int64_t max_age = (opened->expires_at - store::nowMs()) / 1000;
  http::Response r;
  if (form) {
    r = http::Response{303, "text/plain; charset=utf-8", {}, "signed in\n"};
    r.header("Location", "/console/");
  } else {
    json::Writer w;
    w.startObject();
    w.field("email", opened->user.email);
    accounts::timeField(w, "session_expires_at", opened->expires_at);
    w.endObject();
    r = http::Response::json(200, w.take());
  }
  r.header("Set-Cookie", sessionCookieValue(c, opened->id, max_age));
  r.header("Cache-Control", "no-store");
  co_await out.send(std::move(r));
}

Awaitable<void> signOut(const ConsoleServices& s, exchange::RequestContext& ctx, http::Request&,
                        http::ResponseWriter& out, const Caller& who) {
  co_await s.accounts.closeSession(who.session_id);
  http::Response r = http::Response::json(200, R"({"signed_out":true})");
  r.header("Set-Cookie", sessionCookieValue(ctx.config.console, "", 0));
  r.header("Cache-Control", "no-store");
  co_await out.send(std::move(r));
}

Awaitable<void> me(const ConsoleServices& s, exchange::RequestContext& ctx, http::Request&,
                   http::ResponseWriter& out, const Caller& who) {
  const std::string csrf = co_await s.accounts.csrfToken(who.session_id);
  const auto teams = co_await s.accounts.teamsOf(who.user);
  json::Writer w;
  writeMe(w, who, csrf, who.session_expires_at, teams, ctx.config.console);
  co_await sendJson(out, w);
}

}  // namespace tollgate::console
