#include "config/price_config.hpp"

#include <limits>
#include <string>

namespace tollgate::config {
namespace {

/// The cache prices of a table, each defaulting to `input` (1-hour writes to the 5-minute).
void readCachePrices(const TableReader& r, money::Rates& rates) {
  rates.cached_input = r.usd("cached_input_cost_per_token").value_or(rates.input);
  rates.cache_write = r.usd("cache_write_cost_per_token").value_or(rates.input);
  rates.cache_write_1h = r.usd("cache_write_1h_cost_per_token").value_or(rates.cache_write);
}

money::Tier parseTier(const TableReader& r, const money::Rates& base) {
  r.allowOnly({"above_input_tokens", "input_cost_per_token", "output_cost_per_token",
               "cached_input_cost_per_token", "cache_write_cost_per_token",
               "cache_write_1h_cost_per_token"});
  money::Tier tier;
  const auto above = r.integer("above_input_tokens", 1, std::numeric_limits<std::int64_t>::max());
  if (!above) {
    r.fail("above_input_tokens", "is required: the input tokens a request must exceed");
  }
  tier.above_input_tokens = *above;
  tier.rates = base;
  tier.rates.input = r.usd("input_cost_per_token").value_or(base.input);
  tier.rates.output = r.usd("output_cost_per_token").value_or(base.output);
  readCachePrices(r, tier.rates);
  return tier;
}

}  // namespace

money::Prices parsePrices(const TableReader& r) {
  money::Prices p = money::flatPrices(r.usd("input_cost_per_token").value_or(0),
                                      r.usd("output_cost_per_token").value_or(0));
  money::Rates& base = p.base;
  p.has_cached_input = r.find("cached_input_cost_per_token") != nullptr;
  p.has_cache_write = r.find("cache_write_cost_per_token") != nullptr;
  p.has_cache_write_1h = r.find("cache_write_1h_cost_per_token") != nullptr;
  readCachePrices(r, base);
  if (const auto audio = r.usd("input_audio_cost_per_token")) {
    p.input_audio = true;
    base.input_audio = *audio;
  }
  const auto audio_out = r.usd("output_audio_cost_per_token");
  p.has_output_audio = audio_out.has_value();
  base.output_audio = audio_out.value_or(base.output);

  const toml::node* tiers = r.find("price_tiers");
  if (tiers == nullptr) {
    return p;
  }
  const toml::array* list = tiers->as_array();
  if (list == nullptr) {
    r.fail("price_tiers", "must be an array of tables ([[models.X.price_tiers]])");
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    const toml::table* t = (*list)[i].as_table();
    const std::string where = "price_tiers[" + std::to_string(i) + "]";
    if (t == nullptr) {
      r.fail(where, "must be a table");
    }
    money::Tier tier = parseTier(TableReader(*t, r.qualified(where), r.file()), base);
    if (!p.tiers.empty() && tier.above_input_tokens <= p.tiers.back().above_input_tokens) {
      r.fail(where + ".above_input_tokens", "must be greater than the tier before it (" +
                                                std::to_string(p.tiers.back().above_input_tokens) +
                                                "): tiers go in increasing order, each once");
    }
    p.tiers.push_back(std::move(tier));
  }
  return p;
}

}  // namespace tollgate::config
