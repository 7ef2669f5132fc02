// Identifiers: UUIDv7 generation (time-ordered, random tail) and UUID text validation.
#pragma once

#include <string>
#include <string_view>

namespace tollgate::ids {

/// A new UUIDv7 in canonical lower-case 8-4-4-4-12 form.
std::string uuidV7();

/// True when `text` is a UUID in canonical 8-4-4-4-12 hexadecimal form (any case).
bool isUuid(std::string_view text);

}  // namespace tollgate::ids
