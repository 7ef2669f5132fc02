// The invariant check every fuzz target uses: a violated invariant is a finding like a crash.
#pragma once

#include <cstdlib>

namespace tollgate::fuzz {

inline void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

}  // namespace tollgate::fuzz
