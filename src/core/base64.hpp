// Base64 (RFC 4648, standard alphabet, padded): what OpenAI's embeddings use for
// encoding_format "base64".
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tollgate::base64 {

std::string encode(std::string_view bytes);

/// nullopt when `text` is not padded base64 of the standard alphabet.
std::optional<std::string> decode(std::string_view text);

}  // namespace tollgate::base64
