// application/x-www-form-urlencoded text, as a query string or a form's body carries it: one
// field's value, decoded ('+' is a space, %XX a byte).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace tollgate::http {

/// The first value of field `name` in `encoded` ("a=1&b=2"), decoded; nullopt when there is no
/// such field; invalid_value (naming the field) when its encoding is broken. At most 64 fields
/// are looked at.
Result<std::optional<std::string>> formValue(std::string_view encoded, std::string_view name);

}  // namespace tollgate::http
