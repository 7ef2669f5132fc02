#include "config/routing_config.hpp"

#include <algorithm>
#include <limits>

namespace tollgate::config {
namespace {

constexpr std::int64_t kMaxRetries = 10;
constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();

/// The inline table at `key`, read by a TableReader that names it in errors.
std::optional<TableReader> subTable(const TableReader& r, std::string_view key) {
  const toml::table* t = r.table(key);
  if (t == nullptr) {
    return std::nullopt;
  }
  return TableReader(*t, r.qualified(key), r.file());
}

/// A duration of 0 (none) to 24 h.
Millis optionalMillis(const TableReader& r, std::string_view key, Millis fallback) {
  return Millis(r.integer(key, 0, kMaxTimeoutMs).value_or(fallback.count()));
}

Variant parseVariant(const TableReader& r, const std::string& name,
                     const std::vector<Model>& models) {
  r.allowOnly({"model", "weight", "system_prompt", "temperature", "top_p", "presence_penalty",
               "frequency_penalty", "max_tokens", "seed", "retries", "timeouts"});
  Variant v;
  v.name = name;
  const auto model = r.string("model");
  if (!model) {
    r.fail("model", "is required: the id of a chat model");
  }
  const auto it = std::lower_bound(models.begin(), models.end(), *model,
                                   [](const Model& m, const std::string& id) { return m.id < id; });
  if (it == models.end() || it->id != *model) {
    r.fail("model", "names \"" + *model + "\", which is not a configured model");
  }
  if (it->endpoint != Endpoint::Chat) {
    r.fail("model", "names \"" + *model + "\", which serves the " +
                        std::string(endpointName(it->endpoint)) + " endpoint, not chat");
  }
  v.model = *model;
  v.weight = r.number("weight").value_or(0);
  v.system_prompt = r.string("system_prompt").value_or("");
  v.temperature = r.numberIn("temperature", 0, 2);
  v.top_p = r.numberIn("top_p", 0, 1);
  v.presence_penalty = r.numberIn("presence_penalty", -2, 2);
  v.frequency_penalty = r.numberIn("frequency_penalty", -2, 2);
  v.max_tokens = r.integer("max_tokens", 1, kMaxTokens);
  v.seed = r.integer("seed", std::numeric_limits<std::int64_t>::min(),
                     std::numeric_limits<std::int64_t>::max());
  if (r.find("retries") != nullptr) {
    v.retries = parseRetries(r, it->retries);
  }
  if (r.find("timeouts") != nullptr) {
    v.timeouts = parseTimeouts(r, it->timeouts);
  }
  return v;
}

Function parseFunction(const TableReader& r, const std::string& name,
                       const std::vector<Model>& models) {
  r.allowOnly({"variants", "fallback_variants"});
  Function f;
  f.name = name;
  const auto variants = subTable(r, "variants");
  if (!variants) {
    r.fail("variants", "is required: at least one [functions." + name + ".variants.NAME] table");
  }
  for (const auto& [key, node] : variants->table()) {
    const std::string vname(key.str());
    if (!isModelId(vname)) {
      variants->fail(vname, "variant names are lowercase words joined by underscores");
    }
    if (!node.is_table()) {
      variants->fail(vname, "must be a table");
    }
    f.variants.push_back(parseVariant(
        TableReader(*node.as_table(), variants->qualified(vname), r.file()), vname, models));
  }
  if (f.variants.empty()) {
    r.fail("variants", "must hold at least one variant");
  }
  std::sort(f.variants.begin(), f.variants.end(),
            [](const Variant& a, const Variant& b) { return a.name < b.name; });
  f.fallback_variants = r.strings("fallback_variants").value_or(std::vector<std::string>{});
  for (const std::string& fallback : f.fallback_variants) {
    if (f.findVariant(fallback) == nullptr) {
      r.fail("fallback_variants", "names \"" + fallback + "\", which is not a variant of " + name);
    }
    if (std::count(f.fallback_variants.begin(), f.fallback_variants.end(), fallback) > 1) {
      r.fail("fallback_variants", "lists \"" + fallback + "\" twice");
    }
  }
  const bool weighted = std::any_of(f.variants.begin(), f.variants.end(),
                                    [](const Variant& v) { return v.weight > 0; });
  if (!weighted) {
    r.fail("variants", "at least one variant needs a weight above 0");
  }
  return f;
}

}  // namespace

RetryPolicy parseRetries(const TableReader& r, const RetryPolicy& fallback) {
  const auto t = subTable(r, "retries");
  if (!t) {
    return fallback;
  }
  t->allowOnly({"num_retries", "max_delay_ms"});
  RetryPolicy p = fallback;
  p.num_retries = t->integer("num_retries", 0, kMaxRetries).value_or(p.num_retries);
  p.max_delay = optionalMillis(*t, "max_delay_ms", p.max_delay);
  return p;
}

Timeouts parseTimeouts(const TableReader& r, const Timeouts& fallback) {
  const auto t = subTable(r, "timeouts");
  if (!t) {
    return fallback;
  }
  t->allowOnly({"non_streaming_total_ms", "streaming_first_token_ms", "streaming_total_ms"});
  Timeouts out = fallback;
  out.non_streaming_total = optionalMillis(*t, "non_streaming_total_ms", out.non_streaming_total);
  out.streaming_first_token =
      optionalMillis(*t, "streaming_first_token_ms", out.streaming_first_token);
  out.streaming_total = optionalMillis(*t, "streaming_total_ms", out.streaming_total);
  if (out.streaming_total.count() > 0 && out.streaming_first_token > out.streaming_total) {
    t->fail("streaming_first_token_ms", "must not exceed streaming_total_ms");
  }
  return out;
}

BreakerPolicy parseBreaker(const TableReader& r) {
  BreakerPolicy p;
  const auto t = subTable(r, "circuit_breaker");
  if (!t) {
    return p;
  }
  t->allowOnly({"failures", "cooldown_ms"});
  constexpr std::int64_t kMaxFailures = 1000;
  p.failures = t->integer("failures", 0, kMaxFailures).value_or(p.failures);
  p.cooldown = t->millis("cooldown_ms", p.cooldown);
  return p;
}

std::vector<Function> parseFunctions(const TableReader& r, const std::vector<Model>& models) {
  std::vector<Function> out;
  for (const auto& [key, node] : r.table()) {
    const std::string name(key.str());
    if (!isModelId(name)) {
      r.fail(name, "function names are lowercase words joined by underscores");
    }
    if (!node.is_table()) {
      r.fail(name, "must be a table");
    }
    out.push_back(
        parseFunction(TableReader(*node.as_table(), r.qualified(name), r.file()), name, models));
  }
  std::sort(out.begin(), out.end(),
            [](const Function& a, const Function& b) { return a.name < b.name; });
  return out;
}

}  // namespace tollgate::config
