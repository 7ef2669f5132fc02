// The console's handlers, one per call of its JSON API (docs/console-api.md), and the sign-in
// page. Each resolves the caller itself (console_call.hpp): the router treats console routes as
// public, since a session is not an API key.
#pragma once

#include "accounts/records_json.hpp"
#include "console/console_call.hpp"
#include "core/text.hpp"

namespace tollgate::api::console {

#define TOLLGATE_CONSOLE_HANDLER(name)                                          \
  Awaitable<void> name(const ConsoleServices& s, exchange::RequestContext& ctx, \
                       http::Request& req, http::ResponseWriter& out)

// Signing in and out (signin.cpp).
TOLLGATE_CONSOLE_HANDLER(signInPage);      ///< GET /console/signin?token=&error=
TOLLGATE_CONSOLE_HANDLER(signInWithLink);  ///< POST /console/api/auth/link
TOLLGATE_CONSOLE_HANDLER(signOut);         ///< POST /console/api/auth/logout
TOLLGATE_CONSOLE_HANDLER(me);              ///< GET /console/api/me

// The pages (pages.cpp).
TOLLGATE_CONSOLE_HANDLER(consolePage);   ///< GET /console/ and /console/{page*}: the HTML shell
TOLLGATE_CONSOLE_HANDLER(consoleAsset);  ///< GET /console/assets/{name}

// Signing in with the OpenID Connect provider (oidc.cpp).
TOLLGATE_CONSOLE_HANDLER(oidcStart);     ///< GET /console/api/auth/oidc/start?return_to=
TOLLGATE_CONSOLE_HANDLER(oidcCallback);  ///< GET /console/api/auth/oidc/callback?code&state&iss

// Teams, members, invitations (teams.cpp).
TOLLGATE_CONSOLE_HANDLER(listTeams);          ///< GET /console/api/teams
TOLLGATE_CONSOLE_HANDLER(createTeam);         ///< POST /console/api/teams
TOLLGATE_CONSOLE_HANDLER(showTeam);           ///< GET /console/api/teams/{team}
TOLLGATE_CONSOLE_HANDLER(listMembers);        ///< GET …/{team}/members
TOLLGATE_CONSOLE_HANDLER(changeMember);       ///< PATCH …/{team}/members/{user}
TOLLGATE_CONSOLE_HANDLER(removeMember);       ///< DELETE …/{team}/members/{user}
TOLLGATE_CONSOLE_HANDLER(listInvitations);    ///< GET …/{team}/invitations
TOLLGATE_CONSOLE_HANDLER(createInvitation);   ///< POST …/{team}/invitations
TOLLGATE_CONSOLE_HANDLER(revokeInvitation);   ///< DELETE …/{team}/invitations/{invitation}
TOLLGATE_CONSOLE_HANDLER(acceptInvitation);   ///< POST /console/api/invitations/accept
TOLLGATE_CONSOLE_HANDLER(previewInvitation);  ///< POST /console/api/invitations/preview
/// POST …/{team}/suspend and …/{team}/resume.
Awaitable<void> setTeamActive(const ConsoleServices& s, exchange::RequestContext& ctx,
                              http::Request& req, http::ResponseWriter& out, bool active);

// Keys (keys.cpp).
TOLLGATE_CONSOLE_HANDLER(listKeys);   ///< GET …/{team}/keys
TOLLGATE_CONSOLE_HANDLER(createKey);  ///< POST …/{team}/keys
TOLLGATE_CONSOLE_HANDLER(revokeKey);  ///< DELETE …/{team}/keys/{key}

// Money and the audit log (spend.cpp).
TOLLGATE_CONSOLE_HANDLER(spendSummary);  ///< GET …/{team}/spend/summary
TOLLGATE_CONSOLE_HANDLER(spendRows);     ///< GET …/{team}/spend
TOLLGATE_CONSOLE_HANDLER(spendCsv);      ///< GET …/{team}/spend.csv
TOLLGATE_CONSOLE_HANDLER(auditLog);      ///< GET …/{team}/audit

// The catalogue (catalogue.cpp) and the playground (playground.cpp).
TOLLGATE_CONSOLE_HANDLER(listModels);     ///< GET /console/api/models
TOLLGATE_CONSOLE_HANDLER(listFunctions);  ///< GET /console/api/functions
TOLLGATE_CONSOLE_HANDLER(playground);     ///< POST …/{team}/chat/completions

#undef TOLLGATE_CONSOLE_HANDLER

}  // namespace tollgate::api::console
