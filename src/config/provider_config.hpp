// Reading one [models.ID.providers.NAME] table: its type, the upstream's address and model, and
// the credentials each type takes (docs/configuration.md, docs/providers.md).
#pragma once

#include <string>

#include "config/config.hpp"
#include "config/table_reader.hpp"

namespace tollgate::config {

/// The provider `name` of table `r`, its secrets read through `env`.
Provider parseProvider(const TableReader& r, const std::string& name, const EnvLookup& env);

}  // namespace tollgate::config
