// `tollgate admin spend …`: a team's spend log, row by row (text, JSON or CSV) or summed by day,
// model, key or tag.
#include <array>
#include <cstdio>
#include <map>

#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

/// --since: a UTC date (2026-11-01) or a time back from now (30m, 12h, 7d); 0 when absent.
std::int64_t since(const Args& a) {
  const auto text = a.option("since");
  if (!text) {
    return 0;
  }
  if (const auto day = text::parseUtcDay(*text)) {
    return *day;
  }
  try {
    return store::nowMs() - duration(*text).count();
  } catch (const UserError&) {
    throw UserError("--since must be a date such as 2026-11-01 or a time back such as 7d");
  }
}

/// " (800 cached, 30 reasoning)": the kinds that are not 0, after a row's or group's tokens.
std::string kindsText(const store::TokenKinds& k) {
  static constexpr std::array<std::string_view, store::kTokenKinds.size()> kShown{
      "cached", "written to the cache", "of them for 1h", "audio in", "reasoning", "audio out"};
  std::string out;
  for (std::size_t i = 0; i < kShown.size(); ++i) {
    if (const std::int64_t n = k.*store::kTokenKinds[i].second; n != 0) {
      out += (out.empty() ? " (" : ", ") + std::to_string(n) + " " + std::string(kShown[i]);
    }
  }
  return out.empty() ? out : out + ")";
}

void printSpendRows(const std::vector<store::SpendRow>& rows, const Args& a) {
  if (a.flag("csv")) {
    std::fputs(accounts::spendCsv(rows).c_str(), stdout);
    return;
  }
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::SpendRow& s : rows) {
      accounts::writeSpendRow(w, s);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::SpendRow& s : rows) {
    std::printf("%s\t%s\t%s\t%s\t%lld+%lld tokens%s\t%s USD\t%lld%s%s%s\n",
                text::utcTimestamp(s.created_at).c_str(), s.request_id.c_str(),
                shown(s.model).c_str(), s.key_public_id.empty() ? "-" : s.key_public_id.c_str(),
                static_cast<long long>(s.prompt_tokens),
                static_cast<long long>(s.completion_tokens), kindsText(s.kinds).c_str(),
                money::formatUsd(s.cost).c_str(), static_cast<long long>(s.status),
                s.cache_hit ? "\tcache hit" : "", s.estimated ? "\testimated" : "",
                s.uncollected > 0
                    ? ("\tuncollected " + money::formatUsd(s.uncollected) + " USD").c_str()
                    : "");
  }
}

/// The team whose spend is asked for (--team), the command's only argument besides its options.
store::Team spendTeam(Admin& admin, const Args& a) {
  a.expect(0);
  return must(admin.accounts.showTeam(admin.op, a.required("team")));
}

void listSpend(Admin& admin, const Args& a) {
  const store::Team team = spendTeam(admin, a);
  store::SpendFilter f{.team_id = team.id, .since_ms = since(a), .model = a.option("model")};
  if (const auto tag = a.option("tag")) {
    const auto eq = tag->find('=');
    if (eq == std::string::npos || eq == 0) {
      throw UserError("--tag must be KEY=VALUE");
    }
    f.tag = std::pair(tag->substr(0, eq), tag->substr(eq + 1));
  }
  printSpendRows(admin.store.listSpend(f), a);
}

void summarizeSpend(Admin& admin, const Args& a) {
  const store::Team team = spendTeam(admin, a);
  static const std::map<std::string, store::SpendGroup, std::less<>> kGroups{
      {"day", store::SpendGroup::Day},
      {"model", store::SpendGroup::Model},
      {"key", store::SpendGroup::Key},
      {"tag", store::SpendGroup::Tag},
      {"user", store::SpendGroup::User}};
  const std::string by = a.required("by");
  const auto group = kGroups.find(by);
  if (group == kGroups.end()) {
    throw UserError("--by must be day, model, key, tag or user");
  }
  const std::int64_t from = since(a);
  const std::string since_day = from == 0 ? "" : text::utcTimestamp(from).substr(0, 10);
  const auto totals = admin.store.summarizeSpend(team.id, group->second, since_day);
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::SpendTotal& t : totals) {
      accounts::writeSpendTotal(w, by, t);
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::SpendTotal& t : totals) {
    std::printf("%s\t%lld requests\t%lld+%lld tokens%s\t%s USD\n", shown(t.group).c_str(),
                static_cast<long long>(t.requests), static_cast<long long>(t.prompt_tokens),
                static_cast<long long>(t.completion_tokens), kindsText(t.kinds).c_str(),
                money::formatUsd(t.cost).c_str());
  }
}

constexpr Verb kSpendVerbs[] = {
    {"list", listSpend},
    {"summary", summarizeSpend},
};

}  // namespace

const Noun kSpend{
    "spend",
    "  spend list --team TEAM [--since DATE|7d] [--model MODEL] [--tag KEY=VALUE] [--json|--csv]\n"
    "  spend summary --team TEAM --by day|model|key|tag [--since DATE|7d] [--json]\n",
    kSpendVerbs};

}  // namespace tollgate::cli::admin
