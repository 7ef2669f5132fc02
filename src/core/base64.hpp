// Base64 (RFC 4648): the standard alphabet, padded, which OpenAI's embeddings use for
// encoding_format "base64"; and the URL-safe alphabet without padding (RFC 4648 §5, as JOSE and
// PKCE write it).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tollgate::base64 {

std::string encode(std::string_view bytes);

/// nullopt when `text` is not padded base64 of the standard alphabet.
std::optional<std::string> decode(std::string_view text);

/// base64url without padding.
std::string encodeUrl(std::string_view bytes);

/// nullopt when `text` is not unpadded base64url in its one canonical spelling: only the URL-safe
/// alphabet, no `=`, no length of 4n+1, and the unused bits of the last character zero.
std::optional<std::string> decodeUrl(std::string_view text);

}  // namespace tollgate::base64
