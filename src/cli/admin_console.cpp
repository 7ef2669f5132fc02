// `tollgate admin login-link EMAIL` (a one-time console sign-in link) and `tollgate admin audit
// list` (the audit log of every change).
#include <cstdio>

#include "accounts/sessions.hpp"
#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "config/console_config.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

void loginLink(Admin& admin, const Args& a) {
  a.expect(1);
  const std::string email = a.at(0, "EMAIL");
  const std::string token = must(admin.accounts.sessions().createLoginLink(email));
  std::fprintf(stderr, "a sign-in link for %s, usable once within 15 minutes:\n",
               shown(email).c_str());
  std::printf("%s/console/signin?token=%s\n", config::consoleOrigin(admin.config).c_str(),
              token.c_str());
}

void listAudit(Admin& admin, const Args& a) {
  a.expect(0);
  store::AuditFilter f;
  f.limit = 1000;
  if (const auto team = a.option("team")) {
    const auto t = must(admin.accounts.showTeam(admin.op, *team));
    f.team_id = t.id;
  }
  const auto entries = admin.store.listAudit(f);
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::AuditEntry& e : entries) {
      accounts::writeAuditEntry(w, e);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::AuditEntry& e : entries) {
    std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", text::utcTimestamp(e.at).c_str(),
                shown(e.actor).c_str(), e.team.empty() ? "-" : shown(e.team).c_str(),
                e.action.c_str(), shown(e.target).c_str(), shown(e.source).c_str());
  }
}

constexpr Verb kAuditVerbs[] = {{"list", listAudit}};

}  // namespace

const Noun kAudit{"audit", "  audit list [--team TEAM] [--json]   (newest first, at most 1000)\n",
                  kAuditVerbs};

const Noun kLoginLink{"login-link",
                      "  login-link EMAIL   (a one-time console sign-in link; the user is added "
                      "if new)\n",
                      {},
                      loginLink};

}  // namespace tollgate::cli::admin
