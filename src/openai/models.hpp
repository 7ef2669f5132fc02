// GET /v1/models (spec §4.5): the catalogue of configured models, filtered by allow_tee/allow_zdr,
// and GET /v1/models/{id}: one item (spec §2.2).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/prices.hpp"
#include "core/result.hpp"

namespace tollgate::json {
class Writer;
}  // namespace tollgate::json

namespace tollgate::openai {

/// The prices beyond the spec's two, each only when configured: cache, audio, tiers (each
/// tier's rates resolved), as a catalogue item's top-level members.
void writeMorePrices(json::Writer& w, const money::Prices& p);

/// The `{object:"list",data:[…]}` body for the query string after '?' (may be empty); only the
/// models in `allowed` (a key's allowed models, core/key_rules.hpp) when it is not null.
Result<std::string> listModels(const config::Config& config, std::string_view query,
                               const std::vector<std::string>* allowed = nullptr);

/// The item of model `id` (any configured model, active or not), or ModelNotFound (404), also
/// when `allowed` is not null and does not allow it.
Result<std::string> retrieveModel(const config::Config& config, std::string_view id,
                                  const std::vector<std::string>* allowed = nullptr);

}  // namespace tollgate::openai
