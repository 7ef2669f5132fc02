// Plan: what will serve a request's `model` string (a plain id, tollgate::model_name::ID or
// tollgate::function_name::NAME): the configured model and its providers in routing order.
// Functions and their variants resolve here when they arrive.
#pragma once

#include <span>
#include <string_view>

#include "config/config.hpp"
#include "core/result.hpp"

namespace tollgate::inference {

struct Plan {
  const config::Model* model = nullptr;
  std::span<const config::Provider> providers;  ///< In the order they are tried.
};

/// The plan for `requested`, or a model-not-found error naming what was asked for.
Result<Plan> plan(const config::Config& config, std::string_view requested);

}  // namespace tollgate::inference
