// Unicode as names and host names need it, from ICU (no tables of our own): Normalization Form
// C, the general categories a name must not hold, the UTS #39 skeleton that tells look-alike
// names apart, a rendering that makes invisible characters visible, and host names in ASCII
// (UTS #46). Every function takes well-formed UTF-8 (text::isValidUtf8) unless it says.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tollgate::unicode {

/// `s` in Normalization Form C.
std::string nfc(std::string_view s);

/// The first code point of `s` that is a format character (category Cf: bidi overrides,
/// zero-width spaces and joiners), private use (Co), a surrogate (Cs) or unassigned (Cn); nullopt
/// when there is none.
std::optional<char32_t> firstHidden(std::string_view s);

/// The UTS #39 skeleton of `s`: equal for strings that look alike ("dеfault" with a Cyrillic е
/// and "default"), different otherwise.
std::string skeleton(std::string_view s);

/// `s` (any bytes) with what would not show as itself escaped: a control character, or one that
/// firstHidden() would find, as `\u202E` (`\U000E0001` beyond U+FFFF), a byte that is not part of
/// well-formed UTF-8 as `\xNN`, and a backslash as `\\`; at most `max_bytes` of input (then "…").
std::string visible(std::string_view s, std::size_t max_bytes = 1000);

/// `c` written as visible() writes an escaped code point: U+ and 4 to 6 hex digits.
std::string codePointName(char32_t c);

/// A host name in ASCII, as a browser sends it in Origin: its labels mapped and converted by UTS
/// #46 (lower case, an internationalised label in Punycode "xn--…"); nullopt when it is not a
/// valid host name.
std::optional<std::string> hostToAscii(std::string_view host);

}  // namespace tollgate::unicode
