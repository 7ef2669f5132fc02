#include "cli/admin.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include "accounts/accounts.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "store/migrations.hpp"

namespace tollgate::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: tollgate admin [--config FILE | --data-dir DIR] COMMAND\n"
    "  teams create NAME [--balance USD] | list [--json] | show NAME [--json] |\n"
    "        suspend NAME | resume NAME | topup NAME USD | dryrun NAME allow|deny\n"
    "  users add EMAIL [--name NAME]\n"
    "  members add TEAM EMAIL --role ROLE | role TEAM EMAIL ROLE | remove TEAM EMAIL |\n"
    "          list TEAM [--json]\n"
    "  invites create TEAM --role ROLE [--email EMAIL] [--expires 7d] | list TEAM [--json] |\n"
    "          accept TOKEN --email EMAIL | revoke ID\n"
    "  keys create --team TEAM --name NAME [--user EMAIL] | list [--team TEAM] [--json] |\n"
    "       revoke PUBLIC_ID\n"
    "  spend list --team TEAM [--since DATE|7d] [--model MODEL] [--tag KEY=VALUE] [--json|--csv]\n"
    "  spend summary --team TEAM --by day|model|key|tag [--since DATE|7d] [--json]\n"
    "roles: owner, admin, member, viewer\n";

/// A usage mistake: exit 2 with the usage text.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A refused operation or a value that is not one: exit 1 with its line.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The value of an account operation; its refusal is a UserError.
template <class T>
T must(accounts::Outcome<T> outcome) {
  if (!outcome) {
    throw UserError(outcome.error().message);
  }
  return std::move(outcome).value();
}

/// One command's words: positionals and --options (a value each, but the listed flags).
class Args {
 public:
  Args(std::span<const std::string> words, std::set<std::string_view> valued,
       std::set<std::string_view> flags) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      const std::string& w = words[i];
      if (w.starts_with("--")) {
        const std::string_view name = std::string_view(w).substr(2);
        if (flags.contains(name)) {
          options_[std::string(name)] = "";
        } else if (valued.contains(name) && i + 1 < words.size()) {
          options_[std::string(name)] = words[++i];
        } else {
          throw UsageError(valued.contains(name) ? w + " needs a value" : "unknown option " + w);
        }
      } else {
        positional_.push_back(w);
      }
    }
  }
  const std::string& at(std::size_t i, std::string_view what) const {
    if (i >= positional_.size()) {
      throw UsageError("missing " + std::string(what));
    }
    return positional_[i];
  }
  void expect(std::size_t n) const {
    if (positional_.size() > n) {
      throw UsageError("unexpected argument " + text::printable(positional_[n], 60));
    }
  }
  std::optional<std::string> option(const std::string& name) const {
    const auto it = options_.find(name);
    return it == options_.end() ? std::nullopt : std::optional(it->second);
  }
  std::string required(const std::string& name) const {
    auto v = option(name);
    if (!v) {
      throw UsageError("--" + name + " is required");
    }
    return *v;
  }
  bool flag(const std::string& name) const { return options_.contains(name); }

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> options_;
};

void timeField(json::Writer& w, std::string_view key, std::optional<std::int64_t> ms) {
  w.key(key);
  if (ms) {
    w.string(text::utcTimestamp(*ms));
  } else {
    w.null();
  }
}

/// An amount of pico-USD as its exact decimal USD number.
void usdField(json::Writer& w, std::string_view key, money::Pico amount) {
  w.key(key);
  w.rawNumber(money::formatUsd(amount));
}

void textField(json::Writer& w, std::string_view key, const std::optional<std::string>& v) {
  w.key(key);
  if (v) {
    w.string(*v);
  } else {
    w.null();
  }
}

void printJson(json::Writer& w) { std::printf("%s\n", w.take().c_str()); }

/// Names and emails are shown as they are stored, with control bytes made visible.
std::string shown(const std::string& s) { return text::printable(s, 1000); }

/// Parses 30m, 12h, 7d.
std::chrono::milliseconds duration(const std::string& text) {
  constexpr std::int64_t kMaxDays = 365;
  if (text.size() < 2) {
    throw UserError("--expires must be like 30m, 12h or 7d");
  }
  std::int64_t n = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || n > kMaxDays * 24 * 60) {
      throw UserError("--expires must be like 30m, 12h or 7d");
    }
    n = n * 10 + (text[i] - '0');
  }
  const char unit = text.back();
  const std::int64_t minutes = unit == 'm' ? n : unit == 'h' ? n * 60 : unit == 'd' ? n * 1440 : -1;
  if (minutes <= 0 || minutes > kMaxDays * 1440) {
    throw UserError("--expires must be between 1m and 365d, like 30m, 12h or 7d");
  }
  return std::chrono::minutes(minutes);
}

void reportLagging(const accounts::Propagation& p) {
  for (const store::GatewayRecord& g : p.lagging) {
    std::fprintf(stderr,
                 "warning: gateway %s (host %s, pid %lld) did not confirm the change in time; it "
                 "applies it when it reaches the store again\n",
                 g.id.c_str(), shown(g.host).c_str(), static_cast<long long>(g.pid));
  }
}

std::string inviteState(const store::Invite& i) {
  if (i.revoked_at) {
    return "revoked";
  }
  if (i.accepted_at) {
    return "accepted";
  }
  return i.expires_at <= store::nowMs() ? "expired" : "pending";
}

int teams(accounts::Accounts& acc, const std::string& verb, const Args& a) {
  const accounts::Actor op;
  if (verb == "create") {
    a.expect(1);
    const std::optional<std::string> balance = a.option("balance");
    const money::Pico amount = balance ? must(accounts::parseAmount(*balance)) : 0;
    const store::Team t = must(acc.createTeam(op, a.at(0, "NAME"), amount));
    std::printf("created team %s with a balance of %s USD\n", shown(t.name).c_str(),
                money::formatUsd(t.balance).c_str());
  } else if (verb == "topup") {
    a.expect(2);
    // An unknown team is reported before a mistaken amount.
    const store::Team t = must(acc.showTeam(op, a.at(0, "NAME")));
    const store::Team now =
        must(acc.topUp(op, t.name, must(accounts::parseAmount(a.at(1, "USD")))));
    std::printf("team %s: balance %s USD\n", shown(now.name).c_str(),
                money::formatUsd(now.balance).c_str());
  } else if (verb == "list") {
    a.expect(0);
    const auto all = must(acc.listTeams(op));
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
    } else {
      for (const store::Team& t : all) {
        std::printf("%s\t%s\t%s\n", shown(t.name).c_str(), t.state.c_str(),
                    text::utcTimestamp(t.created_at).c_str());
      }
    }
  } else if (verb == "show") {
    a.expect(1);
    const accounts::TeamSummary s = must(acc.teamSummary(op, a.at(0, "NAME")));
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
      w.endObject();
      printJson(w);
    } else {
      std::printf(
          "team %s\nstate %s\ncreated %s\nmembers %lld\nactive keys %lld\nbalance %s USD\n"
          "reserved %s USD\n",
          shown(t.name).c_str(), t.state.c_str(), text::utcTimestamp(t.created_at).c_str(),
          static_cast<long long>(s.members), static_cast<long long>(s.active_keys),
          money::formatUsd(t.balance).c_str(), money::formatUsd(t.reserved).c_str());
    }
  } else if (verb == "suspend" || verb == "resume") {
    a.expect(1);
    reportLagging(must(acc.setTeamActive(op, a.at(0, "NAME"), verb == "resume")));
    std::printf("%s team %s\n", verb == "resume" ? "resumed" : "suspended",
                shown(a.at(0, "NAME")).c_str());
  } else if (verb == "dryrun") {
    a.expect(2);
    const std::string& choice = a.at(1, "allow|deny");
    if (choice != "allow" && choice != "deny") {
      throw UsageError("teams dryrun NAME allow|deny: not " + text::printable(choice, 40));
    }
    reportLagging(must(acc.setTeamDryrun(op, a.at(0, "NAME"), choice == "allow")));
    std::printf("team %s %s dryrun requests\n", shown(a.at(0, "NAME")).c_str(),
                choice == "allow" ? "takes" : "refuses");
  } else {
    throw UsageError("unknown command teams " + text::printable(verb, 40));
  }
  return 0;
}

int users(accounts::Accounts& acc, const std::string& verb, const Args& a) {
  if (verb != "add") {
    throw UsageError("unknown command users " + text::printable(verb, 40));
  }
  a.expect(1);
  const store::User u = must(acc.addUser(a.at(0, "EMAIL"), a.option("name").value_or("")));
  std::printf("added user %s\n", shown(u.email).c_str());
  return 0;
}

int members(accounts::Accounts& acc, const std::string& verb, const Args& a) {
  const accounts::Actor op;
  if (verb == "add") {
    a.expect(2);
    reportLagging(must(acc.addMember(op, a.at(0, "TEAM"), a.at(1, "EMAIL"), a.required("role"))));
    std::printf("added %s to %s\n", shown(a.at(1, "EMAIL")).c_str(),
                shown(a.at(0, "TEAM")).c_str());
  } else if (verb == "role") {
    a.expect(3);
    reportLagging(must(acc.setRole(op, a.at(0, "TEAM"), a.at(1, "EMAIL"), a.at(2, "ROLE"))));
    std::printf("%s is now %s of %s\n", shown(a.at(1, "EMAIL")).c_str(),
                shown(a.at(2, "ROLE")).c_str(), shown(a.at(0, "TEAM")).c_str());
  } else if (verb == "remove") {
    a.expect(2);
    reportLagging(must(acc.removeMember(op, a.at(0, "TEAM"), a.at(1, "EMAIL"))));
    std::printf("removed %s from %s\n", shown(a.at(1, "EMAIL")).c_str(),
                shown(a.at(0, "TEAM")).c_str());
  } else if (verb == "list") {
    a.expect(1);
    const auto all = must(acc.listMembers(op, a.at(0, "TEAM")));
    if (a.flag("json")) {
      json::Writer w;
      w.startArray();
      for (const store::Member& m : all) {
        w.startObject();
        w.field("email", m.user.email);
        w.field("name", m.user.name);
        w.field("role", m.role);
        timeField(w, "joined_at", m.joined_at);
        w.endObject();
      }
      w.endArray();
      printJson(w);
    } else {
      for (const store::Member& m : all) {
        std::printf("%s\t%s\t%s\n", shown(m.user.email).c_str(), m.role.c_str(),
                    shown(m.user.name).c_str());
      }
    }
  } else {
    throw UsageError("unknown command members " + text::printable(verb, 40));
  }
  return 0;
}

int invites(accounts::Accounts& acc, const std::string& verb, const Args& a) {
  const accounts::Actor op;
  if (verb == "create") {
    a.expect(1);
    const auto created =
        must(acc.createInvite(op, a.at(0, "TEAM"), a.required("role"), a.option("email"),
                              duration(a.option("expires").value_or("7d"))));
    std::fprintf(stderr, "invitation %s to %s as %s, expires %s; the token is shown once:\n",
                 created.invite.id.c_str(), shown(created.invite.team).c_str(),
                 created.invite.role.c_str(),
                 text::utcTimestamp(created.invite.expires_at).c_str());
    std::printf("%s\n", created.token.c_str());
  } else if (verb == "list") {
    a.expect(1);
    const auto all = must(acc.listInvites(op, a.at(0, "TEAM")));
    if (a.flag("json")) {
      json::Writer w;
      w.startArray();
      for (const store::Invite& i : all) {
        w.startObject();
        w.field("id", i.id);
        w.field("role", i.role);
        textField(w, "email", i.email);
        w.field("state", inviteState(i));
        timeField(w, "created_at", i.created_at);
        timeField(w, "expires_at", i.expires_at);
        textField(w, "accepted_by", i.accepted_by);
        w.endObject();
      }
      w.endArray();
      printJson(w);
    } else {
      for (const store::Invite& i : all) {
        std::printf("%s\t%s\t%s\t%s\texpires %s\n", i.id.c_str(), i.role.c_str(),
                    inviteState(i).c_str(), shown(i.email.value_or("-")).c_str(),
                    text::utcTimestamp(i.expires_at).c_str());
      }
    }
  } else if (verb == "accept") {
    a.expect(1);
    reportLagging(must(acc.acceptInvite(a.at(0, "TOKEN"), a.required("email"))));
    std::printf("accepted: %s joined the team\n", shown(a.required("email")).c_str());
  } else if (verb == "revoke") {
    a.expect(1);
    must(acc.revokeInvite(op, a.at(0, "ID")));
    std::printf("revoked invitation %s\n", shown(a.at(0, "ID")).c_str());
  } else {
    throw UsageError("unknown command invites " + text::printable(verb, 40));
  }
  return 0;
}

int keys(accounts::Accounts& acc, const std::string& verb, const Args& a) {
  const accounts::Actor op;
  if (verb == "create") {
    a.expect(0);
    const auto created =
        must(acc.createKey(op, a.required("team"), a.required("name"), a.option("user")));
    reportLagging(created.propagation);
    std::fprintf(stderr, "created key %s (%s) for team %s; it is shown once:\n",
                 created.key.public_id.c_str(), shown(created.key.name).c_str(),
                 shown(created.key.team).c_str());
    std::printf("%s\n", created.full.c_str());
  } else if (verb == "list") {
    a.expect(0);
    const auto all = must(acc.listKeys(op, a.option("team")));
    if (a.flag("json")) {
      json::Writer w;
      w.startArray();
      for (const store::ApiKey& k : all) {
        w.startObject();
        w.field("name", k.name);
        w.field("public_id", k.public_id);
        w.field("team", k.team);
        textField(w, "created_by", k.created_by);
        timeField(w, "created_at", k.created_at);
        timeField(w, "last_used_at", k.last_used_at);
        w.field("state", k.revoked_at ? "revoked" : "active");
        timeField(w, "revoked_at", k.revoked_at);
        w.endObject();
      }
      w.endArray();
      printJson(w);
    } else {
      for (const store::ApiKey& k : all) {
        std::printf("%s\t%s\t%s\t%s\tcreated %s\tlast used %s\t%s\n", k.public_id.c_str(),
                    shown(k.name).c_str(), shown(k.team).c_str(),
                    shown(k.created_by.value_or("operator")).c_str(),
                    text::utcTimestamp(k.created_at).c_str(),
                    k.last_used_at ? text::utcTimestamp(*k.last_used_at).c_str() : "never",
                    k.revoked_at ? "revoked" : "active");
      }
    }
  } else if (verb == "revoke") {
    a.expect(1);
    reportLagging(must(acc.revokeKey(op, a.at(0, "PUBLIC_ID"))));
    std::printf("revoked\n");
  } else {
    throw UsageError("unknown command keys " + text::printable(verb, 40));
  }
  return 0;
}

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

int spend(accounts::Accounts& acc, store::Store& st, const std::string& verb, const Args& a) {
  a.expect(0);
  const store::Team team = must(acc.showTeam(accounts::Actor{}, a.required("team")));
  if (verb == "list") {
    store::SpendFilter f{team.id, since(a), a.option("model"), std::nullopt};
    if (const auto tag = a.option("tag")) {
      const auto eq = tag->find('=');
      if (eq == std::string::npos || eq == 0) {
        throw UserError("--tag must be KEY=VALUE");
      }
      f.tag = std::pair(tag->substr(0, eq), tag->substr(eq + 1));
    }
    printSpendRows(st.listSpend(f), a);
    return 0;
  }
  if (verb != "summary") {
    throw UsageError("unknown command spend " + text::printable(verb, 40));
  }
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
  const auto totals = st.summarizeSpend(team.id, group->second, since_day);
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
  } else {
    for (const store::SpendTotal& t : totals) {
      std::printf("%s\t%lld requests\t%lld+%lld tokens\t%s USD\n", shown(t.group).c_str(),
                  static_cast<long long>(t.requests), static_cast<long long>(t.prompt_tokens),
                  static_cast<long long>(t.completion_tokens), money::formatUsd(t.cost).c_str());
    }
  }
  return 0;
}

}  // namespace

int runAdmin(std::span<const std::string> args, const StoreSetup& setup) {
  if (args.size() < 2) {
    std::fputs(kUsage.data(), stderr);
    return 2;
  }
  const std::string& noun = args[0];
  const std::string& verb = args[1];
  try {
    const Args a(args.subspan(2),
                 {"name", "role", "email", "expires", "team", "user", "balance", "since", "model",
                  "tag", "by"},
                 {"json", "csv"});
    store::Store st(store::connect(setup.location));
    store::migrate(st.connection());
    accounts::Accounts acc(st, setup.server_secret);
    if (noun == "teams") {
      return teams(acc, verb, a);
    }
    if (noun == "users") {
      return users(acc, verb, a);
    }
    if (noun == "members") {
      return members(acc, verb, a);
    }
    if (noun == "invites") {
      return invites(acc, verb, a);
    }
    if (noun == "keys") {
      return keys(acc, verb, a);
    }
    if (noun == "spend") {
      return spend(acc, st, verb, a);
    }
    throw UsageError("unknown command " + text::printable(noun, 40));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "tollgate admin: %s\n%s", e.what(), kUsage.data());
    return 2;
  } catch (const UserError& e) {
    std::fprintf(stderr, "tollgate admin: %s\n", e.what());
    return 1;
  } catch (const store::StoreError& e) {
    if (e.kind() == store::StoreError::Kind::Conflict) {
      std::fprintf(stderr,
                   "tollgate admin: it already exists (made at the same moment by another "
                   "command?)\n");
    } else {
      std::fprintf(stderr, "tollgate admin: the store failed: %s\n", e.what());
    }
    return 1;
  }
}

}  // namespace tollgate::cli
