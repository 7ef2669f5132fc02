// Which variants of a function serve a request, in the order they are tried: the weighted
// candidates drawn without replacement, then the function's fallback_variants in order. The draw
// is seeded by the episode id, so one episode stays on one variant while it answers.
#pragma once

#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace tollgate::routing {

/// The variants of `function` to try for `episode_id`, first choice first. Every candidate (weight
/// above 0) appears once, then each fallback not already listed.
std::vector<const config::Variant*> variantOrder(const config::Function& function,
                                                 std::string_view episode_id);

}  // namespace tollgate::routing
