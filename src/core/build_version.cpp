#include "core/build_info.hpp"

namespace tollgate::build {

std::string_view version() { return TOLLGATE_VERSION; }

}  // namespace tollgate::build
