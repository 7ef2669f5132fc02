// The invariant checks the fuzz targets use: a violated invariant is a finding like a crash.
#pragma once

#include <cstdlib>
#include <string>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::fuzz {

inline void check(bool ok) {
  if (!ok) {
    std::abort();
  }
}

/// `text` is one valid JSON value in valid UTF-8, as everything the gateway answers must be.
inline void checkJson(const std::string& text) {
  check(text::isValidUtf8(text));
  rapidjson::Document doc;
  check(!json::parse(doc, text));
}

}  // namespace tollgate::fuzz
