// Plan: what will serve a request's `model` string (a plain id, tollgate::model_name::ID or
// tollgate::function_name::NAME): the routes to try in order, each a configured model (for a
// function, one of its variants) with the retries and time limits that apply to it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "core/money.hpp"
#include "core/prices.hpp"
#include "core/result.hpp"

namespace tollgate::inference {

/// One model to try, and its providers in routing order.
struct Route {
  const config::Model* model = nullptr;
  const config::Variant* variant = nullptr;  ///< Set for a function's variant.
  config::RetryPolicy retries;
  config::Timeouts timeouts;
  /// What its answers are costed at (its model's prices, capped at the request's hold): set when
  /// the request is admitted; nullopt when nothing is charged.
  std::optional<money::Pricing> pricing;
};

struct Plan {
  const config::Model* model = nullptr;  ///< The first route's model.
  std::vector<Route> routes;             ///< In the order they are tried; never empty.
  const config::Function* function = nullptr;
};

/// The plan for `requested`, or a model-not-found error naming what was asked for. A function's
/// variants are drawn by weight for `episode_id`; `variant_name` (when not empty) pins one, and
/// is a variant_not_found error when the function has none of that name or `requested` is not a
/// function.
Result<Plan> plan(const config::Config& config, std::string_view requested,
                  std::string_view episode_id = {}, std::string_view variant_name = {});

}  // namespace tollgate::inference
