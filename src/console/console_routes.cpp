#include "console/console_routes.hpp"

#include <optional>

#include "console/handlers.hpp"
#include "console/oidc_client.hpp"
#include "store/connection.hpp"

namespace tollgate::api::console {
namespace {

using http::Access;
using http::Method;

constexpr std::size_t kSmallBody = 64 * 1024;

using Handler = Awaitable<void> (*)(const ConsoleServices&, exchange::RequestContext&,
                                    http::Request&, http::ResponseWriter&);

/// Runs `h`; a store that fails answers 503 service_unavailable, as the rest of the gateway, and
/// a change that a unique index refused (one made at the same moment clashes with it) 409.
Awaitable<void> guarded(Handler h, const ConsoleServices& s, exchange::RequestContext& ctx,
                        http::Request& req, http::ResponseWriter& out) {
  std::optional<store::StoreError::Kind> store_failed;
  try {
    co_await h(s, ctx, req, out);
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
  if (s.config.console.oidc && !s.oidc) {
    s.oidc = std::make_shared<OidcClient>(*s.config.console.oidc, s.api.outbound);
  }
  const auto add = [&](Method method, std::string pattern, Handler h,
                       std::vector<std::string> types = {}, std::size_t limit = kSmallBody) {
    routes.push_back(
        {method, std::move(pattern), Access::Public, limit, std::move(types),
         [s, h](auto& ctx, auto& req, auto& out) { return guarded(h, s, ctx, req, out); }});
  };
  const std::vector<std::string> json{"application/json"};
  const std::string team = "/console/api/teams/{team}";
  add(Method::Get, "/console/signin", signInPage);
  add(Method::Post, "/console/api/auth/link", signInWithLink,
      {"application/json", "application/x-www-form-urlencoded"});
  add(Method::Post, "/console/api/auth/logout", signOut);
  add(Method::Get, "/console/api/me", me);
  add(Method::Get, "/console/api/auth/oidc/start", oidcStart);
  add(Method::Get, "/console/api/auth/oidc/callback", oidcCallback);
  add(Method::Get, "/console/api/models", listModels);
  add(Method::Get, "/console/api/functions", listFunctions);
  add(Method::Get, "/console/api/teams", listTeams);
  add(Method::Post, "/console/api/teams", createTeam, json);
  add(Method::Post, "/console/api/invitations/accept", acceptInvitation, json);
  add(Method::Post, "/console/api/invitations/preview", previewInvitation, json);
  add(Method::Get, team, showTeam);
  add(Method::Post, team + "/suspend", [](auto& s, auto& ctx, auto& req, auto& out) {
    return setTeamActive(s, ctx, req, out, false);
  });
  add(Method::Post, team + "/resume", [](auto& s, auto& ctx, auto& req, auto& out) {
    return setTeamActive(s, ctx, req, out, true);
  });
  add(Method::Get, team + "/members", listMembers);
  add(Method::Patch, team + "/members/{user}", changeMember, json);
  add(Method::Delete, team + "/members/{user}", removeMember);
  add(Method::Get, team + "/invitations", listInvitations);
  add(Method::Post, team + "/invitations", createInvitation, json);
  add(Method::Delete, team + "/invitations/{invitation}", revokeInvitation);
  add(Method::Get, team + "/keys", listKeys);
  add(Method::Post, team + "/keys", createKey, json);
  add(Method::Delete, team + "/keys/{key}", revokeKey);
  add(Method::Get, team + "/spend/summary", spendSummary);
  add(Method::Get, team + "/spend", spendRows);
  add(Method::Get, team + "/spend.csv", spendCsv);
  add(Method::Get, team + "/audit", auditLog);
  add(Method::Post, team + "/chat/completions", playground, json, s.config.gateway.max_body_bytes);
  // The pages last: every path under /console/ that no call above names is a page of the
  // single-page app (pages.cpp answers 404 for unknown api/ and assets/ paths).
  add(Method::Get, "/console/assets/{name}", consoleAsset);
  add(Method::Get, "/console", consolePage);
  add(Method::Get, "/console/{page*}", consolePage);
}

}  // namespace tollgate::api::console
