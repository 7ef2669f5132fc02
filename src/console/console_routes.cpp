#include "console/console_routes.hpp"

#include <optional>
#include <variant>

#include "console/handlers.hpp"
#include "console/oidc_client.hpp"
#include "store/connection.hpp"

namespace tollgate::console {
namespace {

using http::Access;
using http::Method;

constexpr std::size_t kSmallBody = 64 * 1024;

using Handler = Awaitable<void> (*)(const ConsoleServices&, exchange::RequestContext&,
                                    http::Request&, http::ResponseWriter&);
using SessionHandler = Awaitable<void> (*)(const ConsoleServices&, exchange::RequestContext&,
                                           http::Request&, http::ResponseWriter&, const Caller&);
using TeamHandler = Awaitable<void> (*)(const ConsoleServices&, exchange::RequestContext&,
                                        http::Request&, http::ResponseWriter&, const MemberCaller&);

/// A route's handler and what it needs of its caller: nothing (it checks what it needs itself),
/// a session, or a role in the team the path names allowing `action`.
struct Call {
  std::variant<Handler, SessionHandler, TeamHandler> handler;
  Intent intent = Intent::Read;
  accounts::Action action = accounts::Action::ViewTeam;
  bool even_suspended = false;  ///< A change that only takes access away (member()).
};

Call anyone(Handler h) { return {h}; }
Call session(Intent intent, SessionHandler h) { return {h, intent}; }
Call team(accounts::Action action, Intent intent, TeamHandler h, bool even_suspended = false) {
  return {h, intent, action, even_suspended};
}

/// POST …/{team}/suspend (`active` false) and …/resume (true).
template <bool kActive>
Awaitable<void> setTeamActiveTo(const ConsoleServices& s, exchange::RequestContext& ctx,
                                http::Request& req, http::ResponseWriter& out,
                                const MemberCaller& m) {
  return setTeamActive(s, ctx, req, out, m, kActive);
}

/// Runs `call`'s handler once its caller has what the route declares (the one check of it).
Awaitable<void> permitted(const Call& call, const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out) {
  if (const auto* h = std::get_if<Handler>(&call.handler)) {
    co_return co_await (*h)(s, ctx, req, out);
  }
  if (const auto* h = std::get_if<SessionHandler>(&call.handler)) {
    const auto who = co_await signedIn(s, ctx, req, out, call.intent);
    if (who) {
      co_await (*h)(s, ctx, req, out, *who);
    }
    co_return;
  }
  const auto m = co_await member(s, ctx, req, out, call.action, call.intent, call.even_suspended);
  if (m) {
    co_await std::get<TeamHandler>(call.handler)(s, ctx, req, out, *m);
  }
}

/// Runs `call`; a store that fails answers 503 service_unavailable, as the rest of the gateway,
/// and a change that a unique index refused (one made at the same moment clashes with it) 409.
Awaitable<void> guarded(Call call, const ConsoleServices& s, exchange::RequestContext& ctx,
                        http::Request& req, http::ResponseWriter& out) {
  std::optional<store::StoreError::Kind> store_failed;
  try {
    co_await permitted(call, s, ctx, req, out);
  } catch (const store::StoreError& e) {
    store_failed = e.kind();
  }
  if (store_failed == store::StoreError::Kind::Conflict) {
    co_await fail(ctx, out, ErrorKind::Conflict,
                  "this clashes with a change made at the same moment; look again and retry", "");
  } else if (store_failed) {
    co_await fail(ctx, out, ErrorKind::ServiceUnavailable,
                  "the store is unavailable; try again shortly", "");
  }
}

}  // namespace

void addRoutes(std::vector<http::Route>& routes, const ConsoleServices& given) {
  ConsoleServices s = given;
  if (!s.oidc) {
    s.oidc = std::make_shared<OidcClients>(s.api.outbound);
  }
  const auto add = [&](Method method, std::string pattern, Call call,
                       std::vector<std::string> types = {}, std::size_t limit = kSmallBody) {
    routes.push_back(
        {method, std::move(pattern), Access::Public, limit, std::move(types),
         [s, call](auto& ctx, auto& req, auto& out) { return guarded(call, s, ctx, req, out); }});
  };
  using accounts::Action;
  const std::vector<std::string> json{"application/json"};
  const std::string in_team = "/console/api/teams/{team}";
  add(Method::Get, "/console/signin", anyone(signInPage));
  add(Method::Post, "/console/api/auth/link", anyone(signInWithLink),
      {"application/json", "application/x-www-form-urlencoded"});
  add(Method::Post, "/console/api/auth/logout", session(Intent::Change, signOut));
  add(Method::Get, "/console/api/me", session(Intent::Read, me));
  add(Method::Get, "/console/api/auth/oidc/start", anyone(oidcStart));
  add(Method::Get, "/console/api/auth/oidc/callback", anyone(oidcCallback));
  add(Method::Get, "/console/api/models", session(Intent::Read, listModels));
  add(Method::Get, "/console/api/functions", session(Intent::Read, listFunctions));
  add(Method::Get, "/console/api/teams", session(Intent::Read, listTeams));
  add(Method::Post, "/console/api/teams", session(Intent::Change, createTeam), json);
  add(Method::Post, "/console/api/invitations/accept", session(Intent::Change, acceptInvitation),
      json);
  // A change's checks (Origin, CSRF token), though it writes nothing: the token is a secret.
  add(Method::Post, "/console/api/invitations/preview", session(Intent::Change, previewInvitation),
      json);
  // A change that only takes access away is allowed on a suspended team (`true` below): a
  // leaked key is revoked, or a member removed, without resuming the team.
  add(Method::Get, in_team, team(Action::ViewTeam, Intent::Read, showTeam));
  add(Method::Post, in_team + "/suspend",
      team(Action::SuspendTeam, Intent::Change, setTeamActiveTo<false>, true));
  add(Method::Post, in_team + "/resume",
      team(Action::SuspendTeam, Intent::Change, setTeamActiveTo<true>, true));
  // Owners and admins lower a team's rate limits; only the operator raises one.
  add(Method::Patch, in_team + "/limits",
      team(Action::RevokeAnyKey, Intent::Change, changeTeamLimits, true), json);
  add(Method::Get, in_team + "/members", team(Action::ViewTeam, Intent::Read, listMembers));
  add(Method::Patch, in_team + "/members/{user}",
      team(Action::ChangeRoles, Intent::Change, changeMember, true), json);
  add(Method::Delete, in_team + "/members/{user}",
      team(Action::ChangeRoles, Intent::Change, removeMember, true));
  add(Method::Get, in_team + "/invitations", team(Action::Invite, Intent::Read, listInvitations));
  add(Method::Post, in_team + "/invitations",
      team(Action::Invite, Intent::Change, createInvitation), json);
  add(Method::Delete, in_team + "/invitations/{invitation}",
      team(Action::Invite, Intent::Change, revokeInvitation, true));
  add(Method::Get, in_team + "/keys", team(Action::ViewTeam, Intent::Read, listKeys));
  add(Method::Post, in_team + "/keys", team(Action::CreateKey, Intent::Change, createKey), json);
  // A key's rules are changed by those who may revoke any key (its creator set them at first).
  add(Method::Patch, in_team + "/keys/{key}",
      team(Action::RevokeAnyKey, Intent::Change, changeKeyRules, true), json);
  // Any member may ask; accounts decides whose key they may revoke.
  add(Method::Delete, in_team + "/keys/{key}",
      team(Action::ViewTeam, Intent::Change, revokeKey, true));
  add(Method::Get, in_team + "/spend/summary", team(Action::ReadSpend, Intent::Read, spendSummary));
  add(Method::Get, in_team + "/spend", team(Action::ReadSpend, Intent::Read, spendRows));
  add(Method::Get, in_team + "/spend.csv", team(Action::ReadSpend, Intent::Read, spendCsv));
  add(Method::Get, in_team + "/audit", team(Action::ReadAudit, Intent::Read, auditLog));
  // Alerts' deliveries are for those who read the audit log: owners and admins.
  add(Method::Get, in_team + "/alerts", team(Action::ReadAudit, Intent::Read, alertsLog));
  add(Method::Post, in_team + "/chat/completions",
      team(Action::UsePlayground, Intent::Change, playground), json,
      s.config.gateway.max_body_bytes);
  // The pages last: every path under /console/ that no call above names is a page of the
  // single-page app (pages.cpp answers 404 for unknown api/ and assets/ paths).
  add(Method::Get, "/console/assets/{name}", anyone(consoleAsset));
  add(Method::Get, "/console", anyone(consolePage));
  add(Method::Get, "/console/{page*}", anyone(consolePage));
}

}  // namespace tollgate::console
