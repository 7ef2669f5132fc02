// Resolves the request's `model` string (a plain id, tollgate::model_name::ID or
// tollgate::function_name::NAME) to a configured model and its providers in routing order.
#pragma once

#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"

namespace tollgate::routing {

/// The model to serve `requested`, or a model-not-found error naming what was asked for.
Result<const config::Model*> resolveModel(const config::Config& config, std::string_view requested);

}  // namespace tollgate::routing
