#include "config/key_models.hpp"

#include "core/key_rules.hpp"

namespace tollgate::config {

std::optional<std::string> unknownAllowedModel(const Config& config,
                                               std::span<const std::string> allowed) {
  for (const std::string& name : allowed) {
    std::string_view function;
    const bool known = key_rules::isFunctionName(name, function)
                           ? config.findFunction(function) != nullptr
                           : config.findModel(key_rules::bareModelId(name)) != nullptr;
    if (!known) {
      return name;
    }
  }
  return std::nullopt;
}

}  // namespace tollgate::config
