// API keys through the console: created by a signed-in member (the secret shown once, with the
// rules it carries), listed without secrets (with why one that is not revoked does not work),
// their rules changed and revoked (at once on every gateway on the store).
#include <tuple>

#include "config/key_models.hpp"
#include "config/limits_config.hpp"
#include "console/handlers.hpp"
#include "core/key_rules.hpp"

namespace tollgate::console {
namespace {

constexpr std::string_view kExpiresAt = "expires_at";
constexpr std::string_view kAllowedModels = "allowed_models";
constexpr std::string_view kRpm = "rpm";
constexpr std::string_view kTpm = "tpm";
constexpr std::string_view kConcurrent = "concurrent";
constexpr std::string_view kBudgetUsd = "budget_usd";
constexpr std::string_view kBudgetWindow = "budget_window";

/// The rules a body sets: each member present sets its rule, null clears it. An expiry is an
/// RFC 3339 date-time; allowed models are a non-empty list of configured models and functions.
Result<accounts::KeyRulesChange> rulesOf(const config::Config& config,
                                         const rapidjson::Value& body) {
  accounts::KeyRulesChange change;
  if (const rapidjson::Value* v = json::member(body, kExpiresAt)) {
    change.expires_at.emplace();
    if (v->IsString()) {
      *change.expires_at = key_rules::parseRfc3339(json::view(*v));
      if (!*change.expires_at) {
        return Error{ErrorKind::InvalidValue,
                     "expires_at must be an RFC 3339 date-time, e.g. 2026-12-31T23:59:59Z",
                     std::string(kExpiresAt)};
      }
    }
  }
  if (const rapidjson::Value* v = json::member(body, kAllowedModels)) {
    change.allowed_models.emplace();
    if (v->IsArray()) {
      std::vector<std::string> models;
      for (const rapidjson::Value& m : v->GetArray()) {
        models.emplace_back(json::view(m));
      }
      if (models.empty()) {
        return Error{ErrorKind::InvalidValue,
                     "allowed_models must name at least one model (null allows every model)",
                     std::string(kAllowedModels)};
      }
      if (const auto unknown = config::unknownAllowedModel(config, models)) {
        return Error{ErrorKind::InvalidValue,
                     "allowed_models: no model or function '" + text::printable(*unknown) +
                         "' is configured (GET /v1/models lists the models)",
                     std::string(kAllowedModels)};
      }
      *change.allowed_models = std::move(models);
    }
  }
  return change;
}

/// The most a key's limit of one kind may be set to through the console: the smallest the
/// operator set that applies ([limits.key], the team's own, [limits.team]); none when none is.
std::optional<std::int64_t> ceiling(std::optional<std::int64_t> key_default,
                                    std::optional<std::int64_t> team_own,
                                    std::optional<std::int64_t> team_default) {
  std::optional<std::int64_t> most;
  for (const auto v : {key_default, team_own, team_default}) {
    if (v && (!most || *v < *most)) {
      most = v;
    }
  }
  return most;
}

/// The rate limits a body sets for a key of `team`: each a whole number at or below what the
/// operator set. Only the operator raises a limit, so none is removed here (null).
Result<accounts::RateLimitsChange> limitsOf(const config::Config& config, const store::Team& team,
                                            const rapidjson::Value& body) {
  accounts::RateLimitsChange change;
  const config::Limits& key = config.limits.key;
  const config::Limits& team_default = config.limits.team;
  for (const auto& [name, to, most] :
       {std::tuple{kRpm, &change.rpm, ceiling(key.rpm, team.limits.rpm, team_default.rpm)},
        std::tuple{kTpm, &change.tpm, ceiling(key.tpm, team.limits.tpm, team_default.tpm)},
        std::tuple{kConcurrent, &change.concurrent,
                   ceiling(key.concurrent, team.limits.concurrent, team_default.concurrent)}}) {
    const rapidjson::Value* v = json::member(body, name);
    if (v == nullptr) {
      continue;
    }
    const std::string at_most = most ? std::to_string(*most) : std::to_string(config::kMaxLimit);
    const std::string member(name);
    if (v->IsNull()) {
      return Error{ErrorKind::InvalidValue,
                   member + ": only the operator removes a key's limit (tollgate admin keys " +
                       "update --" + member + " none); set a number from 1 to " + at_most,
                   member};
    }
    const std::int64_t n = v->GetInt64();
    if (n < 1 || n > most.value_or(config::kMaxLimit)) {
      return Error{ErrorKind::InvalidValue,
                   member + " must be from 1 to " + at_most +
                       (most ? ", the limit the operator set (only the operator raises one)" : ""),
                   member};
    }
    to->emplace(n);
  }
  return change;
}

/// The budget a body sets: `budget_usd` (a JSON number or a decimal string, read exactly; null
/// removes the budget) and `budget_window` (day, week, month or total; month when left out).
using BudgetChange = std::optional<std::optional<key_rules::Budget>>;

Result<BudgetChange> budgetOf(const rapidjson::Value& body) {
  const rapidjson::Value* usd = json::member(body, kBudgetUsd);
  const std::optional<std::string> window = stringOf(body, kBudgetWindow);
  if (usd == nullptr) {
    if (window) {
      return Error{ErrorKind::InvalidValue, "budget_window goes with budget_usd",
                   std::string(kBudgetWindow)};
    }
    return BudgetChange();
  }
  if (usd->IsNull()) {
    return BudgetChange(std::optional<key_rules::Budget>());
  }
  // A number is read as the shortest text that is that number: what a client wrote, unless it
  // gave more digits than a double keeps (a decimal string is exact always).
  const std::string text = usd->IsString()   ? std::string(json::view(*usd))
                           : usd->IsNumber() ? json::serialize(*usd)
                                             : std::string();
  const auto amount = accounts::parseAmount(text);
  if (!amount || *amount <= 0) {
    return Error{ErrorKind::InvalidValue,
                 "budget_usd must be an amount of USD above 0, such as 25 or \"0.50\" (at most 12 "
                 "decimal places); null removes the budget",
                 std::string(kBudgetUsd)};
  }
  const auto kind = key_rules::parseBudgetWindow(window.value_or("month"));
  if (!kind) {
    return Error{ErrorKind::InvalidValue, "budget_window must be day, week, month or total",
                 std::string(kBudgetWindow)};
  }
  return BudgetChange(key_rules::Budget{*amount, *kind});
}

/// A key's rules and limits a body sets (rulesOf, limitsOf, budgetOf).
Result<accounts::KeyRulesChange> changeOf(const config::Config& config, const store::Team& team,
                                          const rapidjson::Value& body) {
  auto change = rulesOf(config, body);
  if (!change) {
    return change;
  }
  auto limits = limitsOf(config, team, body);
  if (!limits) {
    return limits.error();
  }
  change->limits = *limits;
  auto budget = budgetOf(body);
  if (!budget) {
    return budget.error();
  }
  change->budget = *budget;
  return change;
}

}  // namespace

Awaitable<void> listKeys(const ConsoleServices& s, exchange::RequestContext& ctx, http::Request&,
                         http::ResponseWriter& out, const MemberCaller& m) {
  const auto all = co_await s.accounts.listKeys(m.who.actor, m.member.team.name);
  // A key that is not revoked works while its creator is a member who may create keys.
  const auto members = co_await s.accounts.listMembers(m.who.actor, m.member.team.name);
  if (!members) {
    const Error refused = refusalError(members.error());
    co_return co_await fail(ctx, out, refused);
  }
  const auto write = [&members](json::Writer& w, const store::ApiKey& k) {
    accounts::writeKey(w, k, accounts::keyInactiveReason(k, *members));
  };
  co_await answerList(ctx, out, all, write);
}

Awaitable<void> createKey(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  auto body = jsonBody(req, {.required = {"name"},
                             .optional = {kExpiresAt, kBudgetWindow},
                             .counts = {kRpm, kTpm, kConcurrent},
                             .lists = {kAllowedModels},
                             .amounts = {kBudgetUsd}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  const auto rules = changeOf(ctx.config, m.member.team, *body);
  if (!rules) {
    co_return co_await fail(ctx, out, rules.error());
  }
  // A user's key is their own: it works while they may create keys in the team.
  const std::string name = *stringOf(*body, "name");
  const auto made = co_await s.accounts.createKey(m.who.actor, m.member.team.name, name,
                                                  std::nullopt, rules->rules());
  co_await answer(
      ctx, out, made,
      [](json::Writer& w, const accounts::CreatedKey& k) {
        w.startObject();
        w.key("key");
        accounts::writeKey(w, k.key);
        w.field("secret", k.full);  // Shown this once; only its keyed hash is stored.
        w.endObject();
      },
      201);
}

Awaitable<void> changeKeyRules(const ConsoleServices& s, exchange::RequestContext& ctx,
                               http::Request& req, http::ResponseWriter& out,
                               const MemberCaller& m) {
  auto body = jsonBody(req, {.required = {},
                             .optional = {kExpiresAt, kBudgetWindow},
                             .counts = {kRpm, kTpm, kConcurrent},
                             .lists = {kAllowedModels},
                             .amounts = {kBudgetUsd}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  auto change = changeOf(ctx.config, m.member.team, *body);
  if (!change) {
    co_return co_await fail(ctx, out, change.error());
  }
  // Only a key of this team: another team's is "not found", never "forbidden".
  const std::string public_id(req.params.get("key"));
  const auto ours = [&public_id](const auto& all) {
    const auto it = std::find_if(all->begin(), all->end(),
                                 [&](const store::ApiKey& k) { return k.public_id == public_id; });
    return it == all->end() ? std::nullopt : std::optional(*it);
  };
  const auto before = co_await s.accounts.listKeys(m.who.actor, m.member.team.name);
  if (!before || !ours(before)) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such key", "key");
  }
  const auto done = co_await s.accounts.changeKeyRules(m.who.actor, public_id, *std::move(change));
  if (!done) {
    const Error refused = refusalError(done.error());
    co_return co_await fail(ctx, out, refused);
  }
  const auto after = co_await s.accounts.listKeys(m.who.actor, m.member.team.name);
  const auto key = after ? ours(after) : std::nullopt;
  if (!key) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such key", "key");
  }
  json::Writer w;
  w.startObject();
  w.key("key");
  accounts::writeKey(w, *key);
  w.field("gateways_lagging", static_cast<std::int64_t>(done->lagging.size()));
  w.endObject();
  http::Response changed = http::Response::json(200, w.take());
  co_await out.send(std::move(changed));
}

Awaitable<void> revokeKey(const ConsoleServices& s, exchange::RequestContext& ctx,
                          http::Request& req, http::ResponseWriter& out, const MemberCaller& m) {
  // Only a key of this team: another team's is "not found", never "forbidden".
  const std::string public_id(req.params.get("key"));
  const auto all = co_await s.accounts.listKeys(m.who.actor, m.member.team.name);
  const bool ours = all && std::any_of(all->begin(), all->end(), [&](const store::ApiKey& k) {
                      return k.public_id == public_id;
                    });
  if (!ours) {
    co_return co_await fail(ctx, out, ErrorKind::ResourceNotFound, "no such key", "key");
  }
  // Accounts decides: any key for those who may revoke any, else only one's own.
  const auto done = co_await s.accounts.revokeKey(m.who.actor, public_id);
  co_await answer(ctx, out, done, [&](json::Writer& w, const accounts::Propagation& p) {
    w.startObject();
    w.field("revoked", public_id);
    w.field("gateways_lagging", static_cast<std::int64_t>(p.lagging.size()));
    w.endObject();
  });
}

}  // namespace tollgate::console
