// What this binary is: the release version and the commit it was built from, for `tollgate
// --version` and the metrics' build information. The commit is compiled into one small
// generated source (cmake/build_commit.cmake), so a new commit recompiles only it.
#pragma once

#include <string_view>

namespace tollgate::build {

/// The release version, e.g. "0.1.0" (the project's version in CMakeLists.txt).
std::string_view version();

/// The abbreviated commit (7 to 12 lower-case hex digits); "0000000" when the build was made
/// from neither a git checkout nor with -DTOLLGATE_COMMIT.
std::string_view commit();

}  // namespace tollgate::build
