#include "inference/plan.hpp"

#include <string>

namespace tollgate::inference {
namespace {

constexpr std::string_view kModelPrefix = "tollgate::model_name::";
constexpr std::string_view kFunctionPrefix = "tollgate::function_name::";

Error notFound(std::string message) {
  return Error{ErrorKind::ModelNotFound, std::move(message), "model"};
}

}  // namespace

Result<Plan> plan(const config::Config& config, std::string_view requested) {
  if (requested.starts_with(kFunctionPrefix)) {
    // Functions and their variants arrive with a later capability; none is configured yet.
    return notFound("function '" + std::string(requested.substr(kFunctionPrefix.size())) +
                    "' does not exist");
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
  return Plan{model, model->providers};
}

}  // namespace tollgate::inference
