#include "inference/plan.hpp"

#include "routing/variants.hpp"

namespace tollgate::inference {
namespace {

constexpr std::string_view kModelPrefix = "tollgate::model_name::";
constexpr std::string_view kFunctionPrefix = "tollgate::function_name::";
constexpr std::string_view kVariantParam = "tollgate::variant_name";

Error notFound(std::string message) {
  return Error{ErrorKind::ModelNotFound, std::move(message), "model"};
}

Result<Plan> functionPlan(const config::Config& config, std::string_view name,
                          std::string_view episode_id, std::string_view variant_name) {
  const config::Function* function = config::isModelId(name) ? config.findFunction(name) : nullptr;
  if (function == nullptr) {
    return notFound("The function '" + std::string(name) +
                    "' does not exist. Function names are lowercase words joined by underscores.");
  }
  std::vector<const config::Variant*> variants;
  if (!variant_name.empty()) {
    const config::Variant* pinned = function->findVariant(variant_name);
    if (pinned == nullptr) {
      return Error{ErrorKind::VariantNotFound,
                   "The function '" + function->name + "' has no variant '" +
                       std::string(variant_name) + "'",
                   std::string(kVariantParam)};
    }
    variants.push_back(pinned);
  } else {
    variants = routing::variantOrder(*function, episode_id);
  }
  Plan p;
  p.function = function;
  for (const config::Variant* v : variants) {
    const config::Model* model = config.findModel(v->model);
    if (model != nullptr && model->is_active) {
      p.routes.push_back(Route{model, v, v->retries.value_or(model->retries),
                               v->timeouts.value_or(model->timeouts), std::nullopt});
    }
  }
  if (p.routes.empty()) {
    return notFound("The function '" + function->name + "' has no variant with an active model");
  }
  p.model = p.routes.front().model;
  return p;
}

}  // namespace

Result<Plan> plan(const config::Config& config, std::string_view requested,
                  std::string_view episode_id, std::string_view variant_name) {
  if (requested.starts_with(kFunctionPrefix)) {
    return functionPlan(config, requested.substr(kFunctionPrefix.size()), episode_id, variant_name);
  }
  if (!variant_name.empty()) {
    return Error{ErrorKind::VariantNotFound,
                 "tollgate::variant_name pins a variant of a function; '" + std::string(requested) +
                     "' is not a function (use tollgate::function_name::NAME)",
                 std::string(kVariantParam)};
  }
  std::string_view id = requested;
  if (id.starts_with(kModelPrefix)) {
    id.remove_prefix(kModelPrefix.size());
  }
  const config::Model* model = config::isModelId(id) ? config.findModel(id) : nullptr;
  if (model == nullptr) {
    return notFound("The model '" + std::string(requested) +
                    "' does not exist. Model ids are lowercase words joined by underscores; "
                    "GET /v1/models lists them.");
  }
  if (!model->is_active) {
    return notFound("The model '" + std::string(id) + "' is not active");
  }
  return Plan{
      model, {Route{model, nullptr, model->retries, model->timeouts, std::nullopt}}, nullptr};
}

}  // namespace tollgate::inference
