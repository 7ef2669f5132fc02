// The console's handlers, one per call of its JSON API (docs/console-api.md), and the sign-in
// page. The router treats console routes as public, since a session is not an API key: the
// console's route table declares what each call needs of its caller (nothing, a session, or a
// role in the team the path names), checked once before the handler runs, which is given the
// caller it found.
#pragma once

#include "accounts/records_json.hpp"
#include "console/console_call.hpp"
#include "core/text.hpp"

namespace tollgate::console {

#define TOLLGATE_CONSOLE_CALL(name, ...)                                        \
  Awaitable<void> name(const ConsoleServices& s, exchange::RequestContext& ctx, \
                       http::Request& req, http::ResponseWriter& out __VA_ARGS__)
/// A call open to anyone (it checks what it needs itself).
#define TOLLGATE_CONSOLE_HANDLER(name) TOLLGATE_CONSOLE_CALL(name)
/// A call of a signed-in user.
#define TOLLGATE_CONSOLE_SESSION_HANDLER(name) TOLLGATE_CONSOLE_CALL(name, , const Caller& who)
/// A call of a member of the team the path names.
#define TOLLGATE_CONSOLE_TEAM_HANDLER(name) TOLLGATE_CONSOLE_CALL(name, , const MemberCaller& m)

// Signing in and out (signin.cpp).
TOLLGATE_CONSOLE_HANDLER(signInPage);       ///< GET /console/signin?token=&error=
TOLLGATE_CONSOLE_HANDLER(signInWithLink);   ///< POST /console/api/auth/link
TOLLGATE_CONSOLE_SESSION_HANDLER(signOut);  ///< POST /console/api/auth/logout
TOLLGATE_CONSOLE_SESSION_HANDLER(me);       ///< GET /console/api/me

// The pages (pages.cpp).
TOLLGATE_CONSOLE_HANDLER(consolePage);   ///< GET /console/ and /console/{page*}: the HTML shell
TOLLGATE_CONSOLE_HANDLER(consoleAsset);  ///< GET /console/assets/{name}

// Signing in with the OpenID Connect provider (oidc.cpp).
TOLLGATE_CONSOLE_HANDLER(oidcStart);     ///< GET /console/api/auth/oidc/start?return_to=
TOLLGATE_CONSOLE_HANDLER(oidcCallback);  ///< GET /console/api/auth/oidc/callback?code&state&iss

// Teams, members, invitations (teams.cpp).
TOLLGATE_CONSOLE_SESSION_HANDLER(listTeams);         ///< GET /console/api/teams
TOLLGATE_CONSOLE_SESSION_HANDLER(createTeam);        ///< POST /console/api/teams
TOLLGATE_CONSOLE_TEAM_HANDLER(showTeam);             ///< GET /console/api/teams/{team}
TOLLGATE_CONSOLE_TEAM_HANDLER(listMembers);          ///< GET …/{team}/members
TOLLGATE_CONSOLE_TEAM_HANDLER(changeMember);         ///< PATCH …/{team}/members/{user}
TOLLGATE_CONSOLE_TEAM_HANDLER(removeMember);         ///< DELETE …/{team}/members/{user}
TOLLGATE_CONSOLE_TEAM_HANDLER(listInvitations);      ///< GET …/{team}/invitations
TOLLGATE_CONSOLE_TEAM_HANDLER(createInvitation);     ///< POST …/{team}/invitations
TOLLGATE_CONSOLE_TEAM_HANDLER(revokeInvitation);     ///< DELETE …/{team}/invitations/{invitation}
TOLLGATE_CONSOLE_SESSION_HANDLER(acceptInvitation);  ///< POST /console/api/invitations/accept
TOLLGATE_CONSOLE_SESSION_HANDLER(previewInvitation);  ///< POST /console/api/invitations/preview
/// POST …/{team}/suspend and …/{team}/resume.
TOLLGATE_CONSOLE_CALL(setTeamActive, , const MemberCaller& m, bool active);
TOLLGATE_CONSOLE_TEAM_HANDLER(changeTeamLimits);  ///< PATCH …/{team}/limits

// Keys (keys.cpp).
TOLLGATE_CONSOLE_TEAM_HANDLER(listKeys);        ///< GET …/{team}/keys
TOLLGATE_CONSOLE_TEAM_HANDLER(createKey);       ///< POST …/{team}/keys
TOLLGATE_CONSOLE_TEAM_HANDLER(changeKeyRules);  ///< PATCH …/{team}/keys/{key}
TOLLGATE_CONSOLE_TEAM_HANDLER(revokeKey);       ///< DELETE …/{team}/keys/{key}

// Money and the audit log (spend.cpp).
TOLLGATE_CONSOLE_TEAM_HANDLER(spendSummary);  ///< GET …/{team}/spend/summary
TOLLGATE_CONSOLE_TEAM_HANDLER(spendRows);     ///< GET …/{team}/spend
TOLLGATE_CONSOLE_TEAM_HANDLER(spendCsv);      ///< GET …/{team}/spend.csv
TOLLGATE_CONSOLE_TEAM_HANDLER(auditLog);      ///< GET …/{team}/audit
TOLLGATE_CONSOLE_TEAM_HANDLER(alertsLog);     ///< GET …/{team}/alerts

// The catalogue (catalogue.cpp) and the playground (playground.cpp).
TOLLGATE_CONSOLE_SESSION_HANDLER(listModels);     ///< GET /console/api/models
TOLLGATE_CONSOLE_SESSION_HANDLER(listFunctions);  ///< GET /console/api/functions
TOLLGATE_CONSOLE_TEAM_HANDLER(playground);        ///< POST …/{team}/chat/completions

#undef TOLLGATE_CONSOLE_TEAM_HANDLER
#undef TOLLGATE_CONSOLE_SESSION_HANDLER
#undef TOLLGATE_CONSOLE_HANDLER
#undef TOLLGATE_CONSOLE_CALL

}  // namespace tollgate::console
