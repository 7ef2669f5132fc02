#include "accounts/records_json.hpp"

#include <algorithm>

#include "accounts/permissions.hpp"
#include "alerts/alert_event.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::accounts {
namespace {

/// One CSV field, always quoted; a leading = + - @ gets a ' so that spreadsheets do not run it.
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

/// Each kind under its name.
void writeKinds(json::Writer& w, const store::TokenKinds& k) {
  for (const auto& [name, field] : store::kTokenKinds) {
    w.field(name, k.*field);
  }
}

std::optional<std::string> unlessEmpty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional(s);
}

/// Past the key's expiry time, by this machine's clock.
bool expired(const store::ApiKey& k) {
  return k.rules.expires_at && *k.rules.expires_at <= store::nowMs();
}

}  // namespace

void timeField(json::Writer& w, std::string_view key, std::optional<std::int64_t> ms) {
  w.key(key);
  if (ms) {
    w.string(text::utcTimestamp(*ms));
  } else {
    w.null();
  }
}

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

std::int64_t uncachedPrompt(std::int64_t prompt_tokens, const store::TokenKinds& k) {
  // Kinds are parts of the prompt (kept only when they fit in it): never below 0.
  return std::max<std::int64_t>(prompt_tokens - k.cached_tokens - k.cache_write_tokens, 0);
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

std::optional<std::string> keyInactiveReason(const store::ApiKey& k,
                                             const std::vector<store::Member>& members) {
  if (!k.revoked_at && expired(k)) {
    return "expired";
  }
  if (k.revoked_at || !k.created_by) {
    return std::nullopt;
  }
  const auto creator = std::find_if(members.begin(), members.end(), [&](const store::Member& m) {
    return m.user.email == *k.created_by;
  });
  if (creator == members.end()) {
    return "creator_not_member";
  }
  const std::optional<Role> role = parseRole(creator->role);
  if (!role || !allowed(*role, Action::CreateKey)) {
    return "creator_role";
  }
  return std::nullopt;
}

void writeKey(json::Writer& w, const store::ApiKey& k,
              const std::optional<std::string>& inactive_reason) {
  w.startObject();
  w.field("name", k.name);
  w.field("public_id", k.public_id);
  w.field("team", k.team);
  textField(w, "created_by", k.created_by);
  timeField(w, "created_at", k.created_at);
  timeField(w, "last_used_at", k.last_used_at);
  // Expiry needs no one's membership: shown also where the caller gave no reason.
  const std::optional<std::string> reason =
      inactive_reason || k.revoked_at || !expired(k) ? inactive_reason : "expired";
  w.field("state", k.revoked_at ? "revoked" : reason ? "inactive" : "active");
  textField(w, "inactive_reason", reason);
  timeField(w, "revoked_at", k.revoked_at);
  writeKeyRules(w, k.rules);
  if (k.budget_spent) {
    usdField(w, "budget_spent_usd", *k.budget_spent);
  }
  w.endObject();
}

void writeKeyRules(json::Writer& w, const key_rules::KeyRules& rules) {
  timeField(w, "expires_at", rules.expires_at);
  w.key("allowed_models");
  if (!rules.allowed_models) {
    w.null();
  } else {
    w.startArray();
    for (const std::string& m : *rules.allowed_models) {
      w.string(m);
    }
    w.endArray();
  }
  writeRateLimits(w, rules.limits);
  if (rules.budget) {
    usdField(w, "budget_usd", rules.budget->pico_usd);
    w.field("budget_window", key_rules::budgetWindowName(rules.budget->window));
  }
}

void writeRateLimits(json::Writer& w, const key_rules::RateLimits& limits) {
  for (const auto& [name, value] : {std::pair{"rpm", limits.rpm}, std::pair{"tpm", limits.tpm},
                                    std::pair{"concurrent", limits.concurrent}}) {
    if (value) {
      w.key(name);
      w.integer(*value);
    }
  }
}

void writeMember(json::Writer& w, const store::Member& m) {
  w.startObject();
  w.field("user_id", m.user.id);
  w.field("email", m.user.email);
  w.field("name", m.user.name);
  w.field("role", m.role);
  timeField(w, "joined_at", m.joined_at);
  w.endObject();
}

void writeInvite(json::Writer& w, const store::Invite& i) {
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

void writeSpendRow(json::Writer& w, const store::SpendRow& s) {
  w.startObject();
  w.field("request_id", s.request_id);
  timeField(w, "created_at", s.created_at);
  w.field("team", s.team);
  textField(w, "key", unlessEmpty(s.key_public_id));
  textField(w, "user_id", unlessEmpty(s.user_id));
  w.field("endpoint", s.endpoint);
  w.field("model", s.model);
  w.field("provider", s.provider);
  textField(w, "variant", unlessEmpty(s.variant));
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
  writeKinds(w, s.kinds);
  w.endObject();
}

void writeSpendTotal(json::Writer& w, std::string_view by, const store::SpendTotal& t) {
  w.startObject();
  w.field(by, t.group);
  w.field("requests", t.requests);
  w.field("prompt_tokens", t.prompt_tokens);
  w.field("completion_tokens", t.completion_tokens);
  usdField(w, "cost", t.cost);
  writeKinds(w, t.kinds);
  w.field("uncached_prompt_tokens", uncachedPrompt(t.prompt_tokens, t.kinds));
  w.endObject();
}

void writeAuditEntry(json::Writer& w, const store::AuditEntry& e) {
  w.startObject();
  w.field("id", e.id);
  timeField(w, "at", e.at);
  w.field("actor", e.actor);
  textField(w, "team", unlessEmpty(e.team));
  w.field("action", e.action);
  w.field("target", e.target);
  w.field("source", e.source);
  w.endObject();
}

void writeAlert(json::Writer& w, const store::AlertRow& a) {
  const bool pending = !a.delivered_at && !a.failed_at;
  w.startObject();
  alerts::writeEventFields(w, a);  // As its receiver is sent them.
  w.field("state", pending ? "pending" : a.delivered_at ? "delivered" : "failed");
  w.field("attempts", a.attempts);
  timeField(w, "next_attempt_at",
            pending ? std::optional<std::int64_t>(a.due_at) : std::optional<std::int64_t>());
  timeField(w, "delivered_at", a.delivered_at);
  timeField(w, "failed_at", a.failed_at);
  w.key("last_status");
  if (a.last_status) {
    w.integer(*a.last_status);
  } else {
    w.null();
  }
  w.endObject();
}

std::string spendCsv(const std::vector<store::SpendRow>& rows) {
  std::string out =
      "request_id,created_at,team,key,endpoint,model,provider,episode_id,prompt_tokens,"
      "completion_tokens,cost,tags,status,upstream_ms,streamed,estimated,uncollected,user_id,"
      "cache_hit,key_name";
  for (const auto& [name, field] : store::kTokenKinds) {
    out += ",";
    out += name;
  }
  out += "\n";
  for (const store::SpendRow& s : rows) {
    out += csv(s.request_id) + "," + csv(text::utcTimestamp(s.created_at)) + "," + csv(s.team) +
           "," + csv(s.key_public_id) + "," + csv(s.endpoint) + "," + csv(s.model) + "," +
           csv(s.provider) + "," + csv(s.episode_id) + "," + std::to_string(s.prompt_tokens) + "," +
           std::to_string(s.completion_tokens) + "," + money::formatUsd(s.cost) + "," +
           csv(s.tags_json) + "," + std::to_string(s.status) + "," + std::to_string(s.upstream_ms) +
           "," + (s.streamed ? "true" : "false") + "," + (s.estimated ? "true" : "false") + "," +
           money::formatUsd(s.uncollected) + "," + csv(s.user_id) + "," +
           (s.cache_hit ? "true" : "false") + "," + csv(s.key_name);
    for (const auto& [name, field] : store::kTokenKinds) {
      out += "," + std::to_string(s.kinds.*field);
    }
    out += "\n";
  }
  return out;
}

}  // namespace tollgate::accounts
