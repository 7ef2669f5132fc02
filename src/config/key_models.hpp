// Checks a key's list of allowed models against the configuration: every name must be a
// configured model (bare, or in its tollgate::model_name:: or tollgate::embedding_model_name::
// form) or a configured function (tollgate::function_name::NAME).
#pragma once

#include <optional>
#include <span>
#include <string>

#include "config/config.hpp"

namespace tollgate::config {

/// The first of `allowed` that names no configured model or function; nullopt when all do.
std::optional<std::string> unknownAllowedModel(const Config& config,
                                               std::span<const std::string> allowed);

}  // namespace tollgate::config
