// `tollgate admin alerts list`: the alerts' deliveries (docs/alerts.md), every team's or one's.
#include <cstdio>

#include "accounts/records_json.hpp"
#include "alerts/alert_event.hpp"
#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

constexpr std::int64_t kListed = 1000;

/// "delivered 2026-11-26T10:00:00Z", "failed 2026-11-27T10:00:00Z" or "next 2026-…".
std::string stateText(const store::AlertRow& a) {
  if (a.delivered_at) {
    return "delivered " + text::utcTimestamp(*a.delivered_at);
  }
  if (a.failed_at) {
    return "failed " + text::utcTimestamp(*a.failed_at);
  }
  return "pending, next " + text::utcTimestamp(a.due_at);
}

void listAlerts(Admin& admin, const Args& a) {
  a.expect(0);
  std::string team_id;
  if (const auto team = a.option("team")) {
    team_id = must(admin.accounts.showTeam(admin.op, *team)).id;
  }
  const auto alerts = admin.store.listAlerts(team_id, kListed);
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::AlertRow& row : alerts) {
      accounts::writeAlert(w, row);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::AlertRow& row : alerts) {
    // A balance's event: the amount and the balance after; a key's: the fraction and its spend.
    const std::string crossed = row.key ? "key " + *row.key + " past " +
                                              alerts::fractionText(row.threshold) + " of " +
                                              money::formatUsd(row.budget.value_or(0)) + " USD"
                                        : "below " + money::formatUsd(row.threshold) + " USD";
    const std::string after = (row.key ? "spent " : "balance ") + money::formatUsd(row.balance);
    std::printf("%s\t%s\t%s\t%s\t%s\t%s USD\t%s\t%lld attempts\t%s\n",
                text::utcTimestamp(row.created_at).c_str(), row.id.c_str(), shown(row.team).c_str(),
                row.type.c_str(), crossed.c_str(), after.c_str(), stateText(row).c_str(),
                static_cast<long long>(row.attempts),
                row.last_status ? ("last status " + std::to_string(*row.last_status)).c_str()
                                : "no answer yet");
  }
}

constexpr Verb kAlertsVerbs[] = {{"list", listAlerts}};

}  // namespace

const Noun kAlerts{"alerts",
                   "  alerts list [--team TEAM] [--json]   (deliveries, newest first, at most "
                   "1000)\n",
                   kAlertsVerbs};

}  // namespace tollgate::cli::admin
