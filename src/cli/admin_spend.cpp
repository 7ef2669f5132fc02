// `tollgate admin spend …`: a team's spend log, row by row (text, JSON or CSV) or summed by day,
// model, key or tag.
#include <cstdio>
#include <ctime>
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
  std::tm tm{};
  const char* end = strptime(text->c_str(), "%Y-%m-%d", &tm);
  if (end != nullptr && *end == '\0') {
    return static_cast<std::int64_t>(timegm(&tm)) * 1000;
  }
  try {
    return store::nowMs() - duration(*text).count();
  } catch (const UserError&) {
    throw UserError("--since must be a date such as 2026-11-01 or a time back such as 7d");
  }
}

/// One CSV field (RFC 4180), always quoted; a leading = + - @ gets a ' so that spreadsheets
/// do not run it as a formula.
std::string csv(std::string_view v) {
  std::string out = "\"";
  if (!v.empty() && std::string_view("=+-@").find(v.front()) != std::string_view::npos) {
    out += '\'';
  }
  for (const char c : v) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  return out + "\"";
}

void printSpendRows(const std::vector<store::SpendRow>& rows, const Args& a) {
  if (a.flag("csv")) {
    std::printf(
        "request_id,created_at,team,key,endpoint,model,provider,episode_id,prompt_tokens,"
        "completion_tokens,cost,tags,status,upstream_ms,streamed,estimated,uncollected\n");
    for (const store::SpendRow& s : rows) {
      std::printf("%s,%s,%s,%s,%s,%s,%s,%s,%lld,%lld,%s,%s,%lld,%lld,%s,%s,%s\n",
                  csv(s.request_id).c_str(), csv(text::utcTimestamp(s.created_at)).c_str(),
                  csv(s.team).c_str(), csv(s.key_public_id).c_str(), csv(s.endpoint).c_str(),
                  csv(s.model).c_str(), csv(s.provider).c_str(), csv(s.episode_id).c_str(),
                  static_cast<long long>(s.prompt_tokens),
                  static_cast<long long>(s.completion_tokens), money::formatUsd(s.cost).c_str(),
                  csv(s.tags_json).c_str(), static_cast<long long>(s.status),
                  static_cast<long long>(s.upstream_ms), s.streamed ? "true" : "false",
                  s.estimated ? "true" : "false", money::formatUsd(s.uncollected).c_str());
    }
    return;
  }
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::SpendRow& s : rows) {
      w.startObject();
      w.field("request_id", s.request_id);
      timeField(w, "created_at", s.created_at);
      w.field("team", s.team);
      textField(w, "key", s.key_public_id.empty() ? std::nullopt : std::optional(s.key_public_id));
      w.field("endpoint", s.endpoint);
      w.field("model", s.model);
      w.field("provider", s.provider);
      textField(w, "variant", s.variant.empty() ? std::nullopt : std::optional(s.variant));
      w.field("episode_id", s.episode_id);
      w.field("prompt_tokens", s.prompt_tokens);
      w.field("completion_tokens", s.completion_tokens);
      usdField(w, "cost", s.cost);
      w.key("tags");
      w.raw(s.tags_json);
      w.field("status", s.status);
      w.field("upstream_ms", s.upstream_ms);
      w.field("streamed", s.streamed);
      w.field("estimated", s.estimated);
      w.field("cache_hit", s.cache_hit);
      usdField(w, "uncollected", s.uncollected);
      w.endObject();
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::SpendRow& s : rows) {
    std::printf("%s\t%s\t%s\t%s\t%lld+%lld tokens\t%s USD\t%lld%s%s\n",
                text::utcTimestamp(s.created_at).c_str(), s.request_id.c_str(),
                shown(s.model).c_str(), s.key_public_id.empty() ? "-" : s.key_public_id.c_str(),
                static_cast<long long>(s.prompt_tokens),
                static_cast<long long>(s.completion_tokens), money::formatUsd(s.cost).c_str(),
                static_cast<long long>(s.status), s.estimated ? "\testimated" : "",
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
  store::SpendFilter f{team.id, since(a), a.option("model"), std::nullopt};
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
      {"tag", store::SpendGroup::Tag}};
  const std::string by = a.required("by");
  const auto group = kGroups.find(by);
  if (group == kGroups.end()) {
    throw UserError("--by must be day, model, key or tag");
  }
  const std::int64_t from = since(a);
  const std::string since_day = from == 0 ? "" : text::utcTimestamp(from).substr(0, 10);
  const auto totals = admin.store.summarizeSpend(team.id, group->second, since_day);
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::SpendTotal& t : totals) {
      w.startObject();
      w.field(by, t.group);
      w.field("requests", t.requests);
      w.field("prompt_tokens", t.prompt_tokens);
      w.field("completion_tokens", t.completion_tokens);
      usdField(w, "cost", t.cost);
      w.endObject();
    }
    w.endArray();
    printJson(w);
    return;
  }
  for (const store::SpendTotal& t : totals) {
    std::printf("%s\t%lld requests\t%lld+%lld tokens\t%s USD\n", shown(t.group).c_str(),
                static_cast<long long>(t.requests), static_cast<long long>(t.prompt_tokens),
                static_cast<long long>(t.completion_tokens), money::formatUsd(t.cost).c_str());
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
