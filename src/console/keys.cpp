// API keys through the console: created by a signed-in member (the secret shown once, with the
// rules it carries), listed without secrets (with why one that is not revoked does not work),
// their rules changed and revoked (at once on every gateway on the store).
#include "config/key_models.hpp"
#include "console/handlers.hpp"
#include "core/key_rules.hpp"

namespace tollgate::console {
namespace {

constexpr std::string_view kExpiresAt = "expires_at";
constexpr std::string_view kAllowedModels = "allowed_models";

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
  auto body =
      jsonBody(req, {.required = {"name"}, .optional = {kExpiresAt}, .lists = {kAllowedModels}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  const auto rules = rulesOf(ctx.config, *body);
  if (!rules) {
    co_return co_await fail(ctx, out, rules.error());
  }
  // A user's key is their own: it works while they may create keys in the team.
  const std::string name = *stringOf(*body, "name");
  key_rules::KeyRules set{rules->expires_at.value_or(std::nullopt),
                          rules->allowed_models.value_or(std::nullopt)};
  const auto made = co_await s.accounts.createKey(m.who.actor, m.member.team.name, name,
                                                  std::nullopt, std::move(set));
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
  auto body = jsonBody(req, {.required = {}, .optional = {kExpiresAt}, .lists = {kAllowedModels}});
  if (!body) {
    co_return co_await fail(ctx, out, body.error());
  }
  auto change = rulesOf(ctx.config, *body);
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
