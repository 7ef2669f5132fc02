#include "console/console_call.hpp"

#include <algorithm>

#include "core/text.hpp"
#include "http/cookies.hpp"
#include "openai/fields.hpp"

namespace tollgate::console {
namespace {

using accounts::RefusalKind;

constexpr std::string_view kNotSignedIn =
    "sign in to the console first (the session cookie is missing, or the session ended)";

}  // namespace

std::string sessionCookie(const config::Console& c) {
  return c.https() ? "__Host-tollgate_session" : "tollgate_session";
}

std::string sessionCookieValue(const config::Console& c, std::string_view id,
                               std::int64_t max_age_seconds) {
  return http::setCookie(sessionCookie(c), id, c.https(), max_age_seconds);
}

bool sameOrigin(const config::Console& c, const http::Request& req) {
  const std::string_view origin = req.header("Origin");
  if (origin.empty()) {
    return false;
  }
  // Under the pages' `Referrer-Policy: no-referrer` a browser sends `Origin: null` with a form's
  // POST, even to its own origin (Fetch, "serializing a request origin"); its Fetch Metadata,
  // which no page can set, then says whether the request came from the console's own origin.
  if (origin == "null") {
    return req.header("Sec-Fetch-Site") == "same-origin";
  }
  if (!c.public_url.empty()) {
    return origin == c.public_url;
  }
  // Without a public URL the console is plain http on the listener the client reached: the
  // origin a browser sends is that of the page, http://HOST as the request's Host names it.
  const std::string_view host = req.header("Host");
  return !host.empty() && origin.size() == 7 + host.size() && origin.starts_with("http://") &&
         origin.substr(7) == host;
}

namespace {

/// A caller and, for a call on a team, their role in it.
struct Found {
  Caller who;
  std::optional<accounts::TeamRole> member;
};

/// The caller of `req` and, with a `team_id`, their role in that team, asked of accounts in one
/// visit; nullopt once the refusal was answered.
Awaitable<std::optional<Found>> lookUp(const ConsoleServices& s, exchange::RequestContext& ctx,
                                       const http::Request& req, http::ResponseWriter& out,
                                       Intent intent, std::optional<std::string> team_id) {
  using Refused = accounts::CallerFound::Refused;
  const config::Console& c = ctx.config.console;
  if (intent == Intent::Change && !sameOrigin(c, req)) {
    co_await fail(ctx, out, ErrorKind::CsrfFailed,
                  "a change to the console must come from the console's own origin (Origin "
                  "header)",
                  "");
    co_return std::nullopt;
  }
  const auto id = http::cookieValue(req.header("Cookie"), sessionCookie(c));
  if (!id || !accounts::isSessionId(*id)) {
    co_await fail(ctx, out, ErrorKind::NotSignedIn, kNotSignedIn, "");
    co_return std::nullopt;
  }
  accounts::CallerQuery q{std::string(*id), std::nullopt, std::move(team_id)};
  if (intent == Intent::Change) {
    q.csrf_token = std::string(req.header("X-CSRF-Token"));
  }
  auto found = co_await s.accounts.findCaller(std::move(q));
  switch (found.refused) {
    case Refused::NotSignedIn:
      co_await fail(ctx, out, ErrorKind::NotSignedIn, kNotSignedIn, "");
      co_return std::nullopt;
    case Refused::CsrfFailed:
      co_await fail(ctx, out, ErrorKind::CsrfFailed,
                    "a change needs the session's CSRF token in the X-CSRF-Token header (from "
                    "GET /console/api/me)",
                    "");
      co_return std::nullopt;
    case Refused::NotMember:
      co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such team", "team");
      co_return std::nullopt;
    case Refused::None:
      break;
  }
  store::User user = std::move(found.signed_in.user);
  accounts::Actor actor{user.email, std::string(req.source)};
  Caller who{std::move(user), std::string(*id), found.signed_in.expires_at, std::move(actor)};
  co_return Found{std::move(who), std::move(found.member)};
}

}  // namespace

Awaitable<std::optional<Caller>> signedIn(const ConsoleServices& s, exchange::RequestContext& ctx,
                                          const http::Request& req, http::ResponseWriter& out,
                                          Intent intent) {
  std::optional<std::string> no_team;
  auto found = co_await lookUp(s, ctx, req, out, intent, std::move(no_team));
  if (!found) {
    co_return std::nullopt;
  }
  co_return std::move(found->who);
}

Awaitable<std::optional<MemberCaller>> member(const ConsoleServices& s,
                                              exchange::RequestContext& ctx,
                                              const http::Request& req, http::ResponseWriter& out,
                                              accounts::Action action, Intent intent,
                                              bool even_suspended) {
  std::optional<std::string> team_id(req.params.get("team"));
  auto found = co_await lookUp(s, ctx, req, out, intent, std::move(team_id));
  if (!found) {
    co_return std::nullopt;
  }
  const accounts::TeamRole& m = *found->member;
  if (!accounts::allowed(m.role, action)) {
    const std::string why = "a team " + std::string(accounts::roleName(m.role)) + " may not " +
                            std::string(accounts::actionName(action));
    co_await fail(ctx, out, ErrorKind::RoleForbidden, why, "");
    co_return std::nullopt;
  }
  if (intent == Intent::Change && !even_suspended && m.team.state != "active") {
    co_await failSuspended(ctx, out);
    co_return std::nullopt;
  }
  co_return MemberCaller{std::move(found->who), *std::move(found->member)};
}

Awaitable<void> failSuspended(exchange::RequestContext& ctx, http::ResponseWriter& out) {
  co_await fail(ctx, out, ErrorKind::TeamSuspended,
                "the team is suspended: its keys, usage and audit log can be read, and access "
                "taken away (a key or an invitation revoked, a member removed or given a lower "
                "role); nothing else in it can be changed or run",
                "");
}

Error refusalError(const accounts::Refusal& r) {
  switch (r.kind) {
    case RefusalKind::Invalid:
      return {ErrorKind::InvalidValue, r.message, ""};
    case RefusalKind::NotFound:
      return {ErrorKind::ResourceNotFound, r.message, ""};
    case RefusalKind::Forbidden:
      return {ErrorKind::RoleForbidden, r.message, ""};
    case RefusalKind::Conflict:
      return {ErrorKind::Conflict, r.message, ""};
    case RefusalKind::TeamLimit:
      return {ErrorKind::TeamLimitReached, r.message, ""};
  }
  return {ErrorKind::Internal, r.message, ""};
}

Awaitable<void> fail(exchange::RequestContext& ctx, http::ResponseWriter& out, ErrorKind kind,
                     std::string_view message, std::string_view param) {
  const Error e{kind, std::string(message), std::string(param)};
  co_await fail(ctx, out, e);
}

Awaitable<void> fail(exchange::RequestContext& ctx, http::ResponseWriter& out, const Error& e) {
  ctx.error_code = std::string(errorSpec(e.kind).code);
  http::Response r = http::Response::error(e);
  r.header("Cache-Control", "no-store");
  co_await out.send(std::move(r));
}

Awaitable<void> throttled(exchange::RequestContext& ctx, http::ResponseWriter& out,
                          std::chrono::seconds wait) {
  const ErrorKind kind = ErrorKind::SignInThrottled;
  ctx.error_code = std::string(errorSpec(kind).code);
  http::Response r =
      http::Response::error({kind,
                             "too many failed sign-ins from this address; try again in " +
                                 std::to_string(wait.count()) + " s",
                             ""});
  r.header("Retry-After", std::to_string(wait.count()));
  r.header("Cache-Control", "no-store");
  co_await out.send(std::move(r));
}

std::string fencedGateways(const accounts::Propagation& p) {
  constexpr std::size_t kMaxHost = 253;  // A DNS name's most.
  std::string out;
  for (const store::GatewayRecord& g : p.lagging) {
    out.append(out.empty() ? "" : ", ")
        .append(text::printable(g.id, kMaxHost))
        .append(" (host ")
        .append(text::printable(g.host, kMaxHost))
        .append(", pid ")
        .append(std::to_string(g.pid))
        .append(", last seen ")
        .append(text::utcTimestamp(g.seen_at))
        .append(")");
  }
  return out;
}

Awaitable<void> sendJson(http::ResponseWriter& out, json::Writer& w, int status) {
  http::Response r = http::Response::json(status, w.take());
  r.header("Cache-Control", "no-store");
  co_await out.send(std::move(r));
}

Result<rapidjson::Document> jsonBody(const http::Request& req, BodyShape shape) {
  rapidjson::Document doc;
  std::optional<Error> refused = openai::parseObjectBody(doc, *req.body);
  const auto in = [](std::initializer_list<std::string_view> names, std::string_view name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  if (!refused) {
    for (const auto& m : doc.GetObject()) {
      const std::string_view name = json::view(m.name);
      const bool text = in(shape.required, name) || in(shape.optional, name);
      const bool list = in(shape.lists, name);
      const auto strings = [](const rapidjson::Value& v) {
        return v.IsArray() && std::all_of(v.Begin(), v.End(), [](const rapidjson::Value& item) {
                 return item.IsString();
               });
      };
      const bool amount = in(shape.amounts, name);
      if (!text && !list && !amount && !in(shape.counts, name)) {
        refused = Error{ErrorKind::UnknownParameter, "unknown member " + std::string(name),
                        std::string(name)};
      } else if (!m.value.IsNull() && (text     ? !m.value.IsString()
                                       : list   ? !strings(m.value)
                                       : amount ? !m.value.IsString() && !m.value.IsNumber()
                                                : !m.value.IsInt64())) {
        refused = Error{ErrorKind::InvalidType,
                        std::string(name) + (text     ? " must be a string"
                                             : list   ? " must be an array of strings"
                                             : amount ? " must be a number or a decimal string"
                                                      : " must be an integer"),
                        std::string(name)};
      }
      if (refused) {
        break;
      }
    }
  }
  for (const std::string_view name : shape.required) {
    if (refused) {
      break;
    }
    if (!stringOf(doc, name)) {
      refused =
          Error{ErrorKind::MissingParameter, std::string(name) + " is required", std::string(name)};
    }
  }
  if (refused) {
    return *std::move(refused);
  }
  return doc;
}

std::optional<std::string> stringOf(const rapidjson::Value& body, std::string_view name) {
  const auto v = json::stringMember(body, name);
  return v ? std::optional<std::string>(*v) : std::nullopt;
}

}  // namespace tollgate::console
