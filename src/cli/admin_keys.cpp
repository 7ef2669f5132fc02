// `tollgate admin keys …`: make (the key shown once, with the rules it carries), list, change the
// rules of and revoke API keys.
#include <algorithm>
#include <charconv>
#include <cstdio>

#include "cli/admin_command.hpp"
#include "cli/admin_output.hpp"
#include "config/key_models.hpp"
#include "config/limits_config.hpp"
#include "core/json.hpp"
#include "core/key_rules.hpp"
#include "core/text.hpp"

namespace tollgate::cli::admin {
namespace {

/// What clears a rule in `keys update`.
constexpr std::string_view kNone = "none";

}  // namespace

accounts::RateLimitsChange limitsOf(const Args& a) {
  accounts::RateLimitsChange change;
  for (const auto& [name, to] : {std::pair{"rpm", &change.rpm}, std::pair{"tpm", &change.tpm},
                                 std::pair{"concurrent", &change.concurrent}}) {
    const auto value = a.option(name);
    if (!value) {
      continue;
    }
    to->emplace();
    if (*value == kNone) {
      continue;
    }
    std::int64_t n = 0;
    const char* end = value->data() + value->size();
    if (const auto [at, ec] = std::from_chars(value->data(), end, n);
        ec != std::errc() || at != end || n < 1 || n > config::kMaxLimit) {
      throw UserError(std::string("--") + name + " must be a whole number from 1 to " +
                      std::to_string(config::kMaxLimit) + ", or none");
    }
    **to = n;
  }
  return change;
}

namespace {

/// The budget --budget-usd (USD, exact; none clears it) and --budget-window (day, week, month or
/// total; month when left out) set; none when neither is given.
std::optional<std::optional<key_rules::Budget>> budgetOf(const Args& a) {
  const auto usd = a.option("budget-usd");
  const auto window = a.option("budget-window");
  if (!usd) {
    if (window) {
      throw UserError("--budget-window goes with --budget-usd");
    }
    return std::nullopt;
  }
  if (*usd == kNone) {
    return std::optional<key_rules::Budget>();
  }
  const money::Pico amount = must(accounts::parseAmount(*usd));
  if (amount <= 0) {
    throw UserError("--budget-usd must be more than 0 (none removes the budget)");
  }
  const auto kind = key_rules::parseBudgetWindow(window.value_or("month"));
  if (!kind) {
    throw UserError("--budget-window must be day, week, month or total");
  }
  return std::optional(key_rules::Budget{amount, *kind});
}

/// The rules --expires-at (RFC 3339) and --allowed-models (comma-separated, configured) set;
/// the word `none` clears a rule.
accounts::KeyRulesChange rulesOf(const Admin& admin, const Args& a) {
  accounts::KeyRulesChange change;
  if (const auto at = a.option("expires-at")) {
    change.expires_at.emplace();
    if (*at != kNone) {
      *change.expires_at = key_rules::parseRfc3339(*at);
      if (!*change.expires_at) {
        throw UserError(
            "--expires-at must be an RFC 3339 date-time, e.g. 2026-12-31T23:59:59Z, "
            "or none");
      }
    }
  }
  if (const auto list = a.option("allowed-models")) {
    change.allowed_models.emplace();
    if (*list != kNone) {
      std::vector<std::string> models;
      std::string_view rest = *list;
      while (!rest.empty()) {
        const std::size_t comma = std::min(rest.find(','), rest.size());
        if (const std::string_view m = text::trimOws(rest.substr(0, comma)); !m.empty()) {
          models.emplace_back(m);
        }
        rest.remove_prefix(std::min(comma + 1, rest.size()));
      }
      if (models.empty()) {
        throw UserError("--allowed-models names no model (none allows every model)");
      }
      if (const auto unknown = config::unknownAllowedModel(admin.config, models)) {
        throw UserError("--allowed-models: no model or function " + shown(*unknown) +
                        " is configured");
      }
      *change.allowed_models = std::move(models);
    }
  }
  change.limits = limitsOf(a);
  change.budget = budgetOf(a);
  return change;
}

std::string modelList(const std::vector<std::string>& models) {
  std::string out;
  for (const std::string& m : models) {
    out += (out.empty() ? "" : ",") + m;
  }
  return out;
}

void createKey(Admin& admin, const Args& a) {
  a.expect(0);
  const accounts::KeyRulesChange rules = rulesOf(admin, a);
  const auto created = must(admin.accounts.createKey(
      admin.op, a.required("team"), a.required("name"), a.option("user"), rules.rules()));
  reportLagging(created.propagation);
  std::fprintf(stderr, "created key %s (%s) for team %s; it is shown once:\n",
               created.key.public_id.c_str(), shown(created.key.name).c_str(),
               shown(created.key.team).c_str());
  std::printf("%s\n", created.full.c_str());
}

void listKeys(Admin& admin, const Args& a) {
  a.expect(0);
  const auto all = must(admin.accounts.listKeys(admin.op, a.option("team")));
  if (a.flag("json")) {
    json::Writer w;
    w.startArray();
    for (const store::ApiKey& k : all) {
      accounts::writeKey(w, k);
    }
    w.endArray();
    printJson(w);
    return;
  }
  const std::int64_t now = store::nowMs();
  for (const store::ApiKey& k : all) {
    const auto& expires = k.rules.expires_at;
    const auto& models = k.rules.allowed_models;
    std::printf("%s\t%s\t%s\t%s\tcreated %s\tlast used %s\t%s\texpires %s\tmodels %s\n",
                k.public_id.c_str(), shown(k.name).c_str(), shown(k.team).c_str(),
                shown(k.created_by.value_or("operator")).c_str(),
                text::utcTimestamp(k.created_at).c_str(),
                k.last_used_at ? text::utcTimestamp(*k.last_used_at).c_str() : "never",
                k.revoked_at                 ? "revoked"
                : expires && *expires <= now ? "expired"
                                             : "active",
                expires ? text::utcTimestamp(*expires).c_str() : "never",
                models ? shown(modelList(*models)).c_str() : "any");
  }
}

void updateKey(Admin& admin, const Args& a) {
  a.expect(1);
  const accounts::KeyRulesChange change = rulesOf(admin, a);
  if (change.empty()) {
    throw UsageError(
        "keys update: give --expires-at, --allowed-models, --rpm, --tpm, --concurrent or "
        "--budget-usd");
  }
  reportLagging(must(admin.accounts.changeKeyRules(admin.op, a.at(0, "PUBLIC_ID"), change)));
  std::printf("updated\n");
}

void revokeKey(Admin& admin, const Args& a) {
  a.expect(1);
  reportLagging(must(admin.accounts.revokeKey(admin.op, a.at(0, "PUBLIC_ID"))));
  std::printf("revoked\n");
}

constexpr Verb kKeyVerbs[] = {
    {"create", createKey},
    {"list", listKeys},
    {"update", updateKey},
    {"revoke", revokeKey},
};

}  // namespace

const Noun kKeys{"keys",
                 "  keys create --team TEAM --name NAME [--user EMAIL] [--expires-at RFC3339] "
                 "[--allowed-models A,B] [--rpm N] [--tpm N] [--concurrent N] "
                 "[--budget-usd USD --budget-window day|week|month|total] |\n"
                 "       list [--team TEAM] [--json] |\n"
                 "       update PUBLIC_ID [--expires-at RFC3339|none] [--allowed-models A,B|none] "
                 "[--rpm N|none] [--tpm N|none] [--concurrent N|none] "
                 "[--budget-usd USD|none --budget-window day|week|month|total] |\n"
                 "       revoke PUBLIC_ID\n",
                 kKeyVerbs};

}  // namespace tollgate::cli::admin
