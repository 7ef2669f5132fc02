#include "openai/models.hpp"

#include <optional>

#include "core/json.hpp"
#include "core/key_rules.hpp"
#include "core/text.hpp"

namespace tollgate::openai {
namespace {

/// Reads one boolean query parameter; absent means true (tagged models included).
Result<bool> allowFlag(std::string_view query, std::string_view name) {
  std::optional<std::string_view> value;
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    }
  }
  if (!value || text::equalsIgnoreCase(*value, "true")) {
    return true;
  }
  if (text::equalsIgnoreCase(*value, "false")) {
    return false;
  }
  return Error{ErrorKind::InvalidValue, std::string(name) + " must be true or false (any case)",
               std::string(name)};
}

void writeUsd(json::Writer& w, std::string_view key, money::Pico amount) {
  w.key(key);
  w.rawNumber(money::formatUsd(amount));
}

/// One item of the list (spec §2.2).
void writeModel(json::Writer& w, const config::Model& m) {
  w.startObject();
  w.field("id", m.id);
  w.field("object", "model");
  w.field("created", m.created);
  w.field("owned_by", m.owned_by);
  w.field("is_active", m.is_active);
  // Prices as the exact decimals configured (0.00000015, not 1.5e-07 or a float's neighbour).
  writeUsd(w, "input_cost_per_token", m.prices.base.input);
  writeUsd(w, "output_cost_per_token", m.prices.base.output);
  writeMorePrices(w, m.prices);
  w.field("max_input_tokens", m.max_input_tokens);
  w.field("max_output_tokens", m.max_output_tokens);
  w.field("input_modalities", m.input_modalities);
  w.field("output_modalities", m.output_modalities);
  w.field("display_name", m.display_name);
  w.key("model_info");
  w.raw(m.model_info_json);
  w.endObject();
}

}  // namespace

void writeMorePrices(json::Writer& w, const money::Prices& p) {
  const auto cache = [&w](const money::Rates& r, bool cached, bool write, bool write_1h) {
    if (cached) {
      writeUsd(w, "cached_input_cost_per_token", r.cached_input);
    }
    if (write) {
      writeUsd(w, "cache_write_cost_per_token", r.cache_write);
    }
    if (write_1h) {
      writeUsd(w, "cache_write_1h_cost_per_token", r.cache_write_1h);
    }
  };
  cache(p.base, p.has_cached_input, p.has_cache_write, p.has_cache_write_1h);
  if (p.input_audio) {
    writeUsd(w, "input_audio_cost_per_token", p.base.input_audio);
  }
  if (p.has_output_audio) {
    writeUsd(w, "output_audio_cost_per_token", p.base.output_audio);
  }
  if (p.tiers.empty()) {
    return;
  }
  w.key("price_tiers");
  w.startArray();
  for (const money::Tier& t : p.tiers) {
    w.startObject();
    w.field("above_input_tokens", t.above_input_tokens);
    writeUsd(w, "input_cost_per_token", t.rates.input);
    writeUsd(w, "output_cost_per_token", t.rates.output);
    cache(t.rates, true, true, true);
    w.endObject();
  }
  w.endArray();
}

Result<std::string> listModels(const config::Config& config, std::string_view query,
                               const std::vector<std::string>* allowed) {
  const Result<bool> allow_tee = allowFlag(query, "allow_tee");
  if (!allow_tee) {
    return allow_tee.error();
  }
  const Result<bool> allow_zdr = allowFlag(query, "allow_zdr");
  if (!allow_zdr) {
    return allow_zdr.error();
  }
  json::Writer w;
  w.startObject();
  w.field("object", "list");
  w.key("data");
  w.startArray();
  for (const config::Model& m : config.models) {
    if ((m.tee && !*allow_tee) || (m.zdr && !*allow_zdr) ||
        (allowed != nullptr && !key_rules::modelAllowed(*allowed, m.id))) {
      continue;
    }
    writeModel(w, m);
  }
  w.endArray();
  w.endObject();
  return w.take();
}

}  // namespace tollgate::openai

namespace tollgate::openai {

Result<std::string> retrieveModel(const config::Config& config, std::string_view id,
                                  const std::vector<std::string>* allowed) {
  // A model the key may not use is not found, as if it did not exist.
  const bool may = allowed == nullptr || key_rules::modelAllowed(*allowed, id);
  const config::Model* m = may && config::isModelId(id) ? config.findModel(id) : nullptr;
  if (m == nullptr) {
    return Error{ErrorKind::ModelNotFound,
                 "The model '" + text::printable(id) +
                     "' does not exist. Model ids are lowercase words joined by underscores; "
                     "GET /v1/models lists them.",
                 "model"};
  }
  json::Writer w;
  writeModel(w, *m);
  return w.take();
}

}  // namespace tollgate::openai
