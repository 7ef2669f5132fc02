// `tollgate admin teams …`: make, list, show, suspend and resume teams, add to their balances,
// and let their keys send dryruns or not.
#include <cstdio>

#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

void createTeam(Admin& admin, const Args& a) {
  a.expect(1);
  const std::optional<std::string> balance = a.option("balance");
  const money::Pico amount = balance ? must(accounts::parseAmount(*balance)) : 0;
  const store::Team t = must(admin.accounts.createTeam(admin.op, a.at(0, "NAME"), amount));
  std::printf("created team %s with a balance of %s USD\n", shown(t.name).c_str(),
              money::formatUsd(t.balance).c_str());
}

void topUpTeam(Admin& admin, const Args& a) {
  a.expect(2);
  // An unknown team is reported before a mistaken amount.
  const store::Team t = must(admin.accounts.showTeam(admin.op, a.at(0, "NAME")));
  const money::Pico amount = must(accounts::parseAmount(a.at(1, "USD")));
  const store::Team now = must(admin.accounts.topUp(admin.op, t.name, amount));
  std::printf("team %s: balance %s USD\n", shown(now.name).c_str(),
              money::formatUsd(now.balance).c_str());
}

void listTeams(Admin& admin, const Args& a) {
  a.expect(0);
  const auto all = must(admin.accounts.listTeams(admin.op));
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::Team& t : all) {
      w.startObject();
      w.field("name", t.name);
      w.field("id", t.id);
      w.field("state", t.state);
      timeField(w, "created_at", t.created_at);
      w.endObject();
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::Team& t : all) {
    std::printf("%s\t%s\t%s\n", shown(t.name).c_str(), t.state.c_str(),
                text::utcTimestamp(t.created_at).c_str());
  }
}

void showTeam(Admin& admin, const Args& a) {
  a.expect(1);
  const accounts::TeamSummary s = must(admin.accounts.teamSummary(admin.op, a.at(0, "NAME")));
  const store::Team& t = s.team;
  if (a.flag("json")) {
    json::Writer w;
    w.startObject();
    w.field("name", t.name);
    w.field("id", t.id);
    w.field("state", t.state);
    timeField(w, "created_at", t.created_at);
    w.field("members", s.members);
    w.field("active_keys", s.active_keys);
    usdField(w, "balance", t.balance);
    usdField(w, "reserved", t.reserved);
    accounts::writeRateLimits(w, t.limits);
    w.endObject();
    printJson(w);
    return;
  }
  std::printf(
      "team %s\nstate %s\ncreated %s\nmembers %lld\nactive keys %lld\nbalance %s USD\n"
      "reserved %s USD\n",
      shown(t.name).c_str(), t.state.c_str(), text::utcTimestamp(t.created_at).c_str(),
      static_cast<long long>(s.members), static_cast<long long>(s.active_keys),
      money::formatUsd(t.balance).c_str(), money::formatUsd(t.reserved).c_str());
}

void setTeamActive(Admin& admin, const Args& a, bool active) {
  a.expect(1);
  reportLagging(must(admin.accounts.setTeamActive(admin.op, a.at(0, "NAME"), active)));
  std::printf("%s team %s\n", active ? "resumed" : "suspended", shown(a.at(0, "NAME")).c_str());
}

void suspendTeam(Admin& admin, const Args& a) { setTeamActive(admin, a, false); }

void resumeTeam(Admin& admin, const Args& a) { setTeamActive(admin, a, true); }

void setDryrun(Admin& admin, const Args& a) {
  a.expect(2);
  const std::string& choice = a.at(1, "allow|deny");
  if (choice != "allow" && choice != "deny") {
    throw UsageError("teams dryrun NAME allow|deny: not " + text::printable(choice, 40));
  }
  reportLagging(must(admin.accounts.setTeamDryrun(admin.op, a.at(0, "NAME"), choice == "allow")));
  std::printf("team %s %s dryrun requests\n", shown(a.at(0, "NAME")).c_str(),
              choice == "allow" ? "takes" : "refuses");
}

void setLimits(Admin& admin, const Args& a) {
  a.expect(1);
  const accounts::RateLimitsChange change = limitsOf(a);
  if (change.empty()) {
    throw UsageError("teams limits NAME: give --rpm, --tpm or --concurrent (N, or none)");
  }
  reportLagging(must(admin.accounts.setTeamLimits(admin.op, a.at(0, "NAME"), change)));
  std::printf("team %s: limits changed\n", shown(a.at(0, "NAME")).c_str());
}

constexpr Verb kTeamVerbs[] = {
    {"create", createTeam}, {"list", listTeams},  {"show", showTeam},    {"suspend", suspendTeam},
    {"resume", resumeTeam}, {"topup", topUpTeam}, {"dryrun", setDryrun}, {"limits", setLimits},
};

}  // namespace

const Noun kTeams{"teams",
                  "  teams create NAME [--balance USD] | list [--json] | show NAME [--json] |\n"
                  "        suspend NAME | resume NAME | topup NAME USD | dryrun NAME allow|deny |\n"
                  "        limits NAME [--rpm N|none] [--tpm N|none] [--concurrent N|none]\n",
                  kTeamVerbs};

}  // namespace tollgate::cli::admin
