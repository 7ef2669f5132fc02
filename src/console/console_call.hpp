// What every call of the console's JSON API shares: the signed-in user from the session cookie
// (401 not_signed_in), for a change the same-origin Origin and the session's CSRF token
// (403 csrf_failed), the caller's role in the team the path names (404 for a team the caller is
// not a member of, never a 403 that confirms it exists; 403 role_forbidden for an action the
// role may not do), the refusals of accounts/ as the error catalogue's, and JSON answers that
// are never cached. Console credentials are not API keys: a session never authorizes /v1, and an
// API key is never looked at here.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "accounts/account_service.hpp"
#include "accounts/records_json.hpp"
#include "accounts/sessions.hpp"
#include "auth/sealed.hpp"
#include "core/json.hpp"
#include "exchange/request_context.hpp"
#include "flow/services.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"

namespace tollgate::console {

template <class T>
using Awaitable = boost::asio::awaitable<T>;

class OidcClients;

/// What the console's handlers are given.
struct ConsoleServices {
  const config::Config& config;
  accounts::AccountService& accounts;
  flow::Services api;  ///< The inference path, for the playground.
  /// Seals the login cookie of a sign-in with the identity provider (oidc.cpp).
  std::shared_ptr<const auth::Sealer> login_sealer;
  /// This worker's clients of the identity provider (addRoutes makes them).
  std::shared_ptr<OidcClients> oidc = nullptr;
};

/// A signed-in user, and the session they called with.
struct Caller {
  store::User user;
  std::string session_id;
  std::int64_t session_expires_at = 0;
  accounts::Actor actor;  ///< The user, from the client's address (for the audit log).
};

/// A caller acting in the team the path names.
struct MemberCaller {
  Caller who;
  accounts::TeamRole member;
};

/// Whether a call reads or changes: a change needs the Origin and the CSRF token.
enum class Intent { Read, Change };

/// The session cookie's name: __Host- prefixed when the console is served over https.
std::string sessionCookie(const config::Console& c);

/// The Set-Cookie value that starts session `id` (empty `id` and `max_age` 0: ends it).
std::string sessionCookieValue(const config::Console& c, std::string_view id,
                               std::int64_t max_age_seconds);

/// True when the request's Origin is the console's own: `public_url`, else the origin the
/// request was sent to (http://HOST from its Host header); or `null`, as a browser sends it under
/// `Referrer-Policy: no-referrer`, with `Sec-Fetch-Site: same-origin`.
bool sameOrigin(const config::Console& c, const http::Request& req);

/// The caller, or nullopt once the refusal was answered. The session and a change's CSRF token
/// are asked of accounts in one visit.
Awaitable<std::optional<Caller>> signedIn(const ConsoleServices& s, exchange::RequestContext& ctx,
                                          const http::Request& req, http::ResponseWriter& out,
                                          Intent intent);

/// The caller as a member of team {team} allowed `action`, or nullopt once refused: the session,
/// a change's CSRF token and the membership are asked of accounts in one visit. A change
/// to a suspended team is refused (403 team_suspended) unless `even_suspended`: a change that
/// only takes access away (revoking a key or an invitation, removing a member, lowering a role)
/// is allowed there to the roles allowed on an active team, so that a leaked key can be revoked
/// without turning the team's keys back on.
Awaitable<std::optional<MemberCaller>> member(const ConsoleServices& s,
                                              exchange::RequestContext& ctx,
                                              const http::Request& req, http::ResponseWriter& out,
                                              accounts::Action action, Intent intent,
                                              bool even_suspended = false);

/// Answers 403 team_suspended for a change to a suspended team.
Awaitable<void> failSuspended(exchange::RequestContext& ctx, http::ResponseWriter& out);

/// The catalogue's error for a refusal of accounts/.
Error refusalError(const accounts::Refusal& r);

/// Answers `e` (never cached), recording its code for the access log.
///
/// The console's coroutines never build an object in a co_await expression (an Error in braces,
/// a lambda with captures): GCC 12 destroys such a temporary from a byte-by-byte copy, and a
/// short string in it is then freed from the wrong address. They name it first, or pass views.
Awaitable<void> fail(exchange::RequestContext& ctx, http::ResponseWriter& out, const Error& e);
/// Answers the error `kind` with `message` about `param`.
Awaitable<void> fail(exchange::RequestContext& ctx, http::ResponseWriter& out, ErrorKind kind,
                     std::string_view message, std::string_view param);

/// Answers `w`'s JSON with `status`, never cached.
Awaitable<void> sendJson(http::ResponseWriter& out, json::Writer& w, int status = 200);

/// 429 sign_in_throttled with Retry-After: an anonymous sign-in from a source that failed too
/// often (SignInGuard), refused before any store access.
Awaitable<void> throttled(exchange::RequestContext& ctx, http::ResponseWriter& out,
                          std::chrono::seconds wait);

/// The header that names the gateways fenced rather than confirmed when a change returned.
inline constexpr std::string_view kFencedHeader = "Tollgate-Gateways-Fenced";

/// Each gateway of `p` fenced rather than confirmed, as `ID (host H, pid P, last seen T)`, the
/// gateways separated by ", "; empty when every gateway confirmed the change.
std::string fencedGateways(const accounts::Propagation& p);

/// Answers an Outcome: its value written by `write`, or its refusal. A change's answer names
/// the gateways fenced rather than confirmed in kFencedHeader.
template <class T, class Write>
Awaitable<void> answer(exchange::RequestContext& ctx, http::ResponseWriter& out,
                       const accounts::Outcome<T>& done, const Write& write, int status = 200) {
  if (!done) {
    const Error refused = refusalError(done.error());
    co_return co_await fail(ctx, out, refused);
  }
  if constexpr (std::is_same_v<T, accounts::Propagation>) {
    if (const std::string fenced = fencedGateways(*done); !fenced.empty()) {
      out.addHeader(std::string(kFencedHeader), fenced);
    }
  }
  json::Writer w;
  write(w, *done);
  co_await sendJson(out, w, status);
}

/// Answers a list: a JSON array of its items, each written by `write_item`.
template <class T, class WriteItem>
Awaitable<void> answerList(exchange::RequestContext& ctx, http::ResponseWriter& out,
                           const accounts::Outcome<std::vector<T>>& done, WriteItem write_item) {
  const auto write = [&write_item](json::Writer& w, const std::vector<T>& items) {
    w.startArray();
    for (const T& item : items) {
      write_item(w, item);
    }
    w.endArray();
  };
  co_await answer(ctx, out, done, write);
}

/// A page of a listing: `{"data": [items], "next_cursor": …}`, the cursor null on the last page.
template <class T, class WriteItem>
void writePage(json::Writer& w, const std::vector<T>& items, WriteItem write_item,
               const std::optional<std::string>& next_cursor) {
  w.startObject();
  w.key("data");
  w.startArray();
  for (const T& item : items) {
    write_item(w, item);
  }
  w.endArray();
  accounts::textField(w, "next_cursor", next_cursor);
  w.endObject();
}

/// What a call's JSON body may hold: strings `required` and `optional`, whole numbers `counts`,
/// arrays of strings `lists`, and `amounts`: an amount of USD, a number or a decimal string (the
/// handler reads it exactly).
struct BodyShape {
  std::initializer_list<std::string_view> required;
  std::initializer_list<std::string_view> optional = {};
  std::initializer_list<std::string_view> counts = {};
  std::initializer_list<std::string_view> lists = {};
  std::initializer_list<std::string_view> amounts = {};
};

/// The request's JSON object body, checked against `shape` (an unknown member is refused, as is a
/// member of the wrong type).
Result<rapidjson::Document> jsonBody(const http::Request& req, BodyShape shape);

/// A string member of a body jsonBody checked; nullopt when absent (or null).
std::optional<std::string> stringOf(const rapidjson::Value& body, std::string_view name);

}  // namespace tollgate::console
