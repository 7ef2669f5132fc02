// Byte-level text checks: UTF-8 validity, a printable rendering of untrusted bytes for error
// messages and logs, and times as text.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tollgate::text {

/// True when `s` is well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates (so a lone
/// `\udc00` escape that a JSON reader decoded to bytes is refused), nothing above U+10FFFF.
bool isValidUtf8(std::string_view s);

/// The length of the longest prefix of `s` that a JSON string holds as it is: no '"', no '\\'
/// and no byte below 0x20 (which must be escaped). Read eight bytes at a time.
std::size_t jsonPlainPrefix(std::string_view s);

/// True when the Content-Type header value `content_type` names the media type `type` (given in
/// lower case): compared case-insensitively, parameters such as `; charset=utf-8` allowed.
bool isMediaType(std::string_view content_type, std::string_view type);

/// `c` with an ASCII capital letter made small; any other byte as it is (no locale involved).
constexpr char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

/// `s` with its ASCII capital letters made small.
std::string lowerAscii(std::string_view s);

/// True when `c` is an ASCII letter or digit (no locale involved).
constexpr bool isAsciiAlnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

/// True when every byte of `s` is an ASCII letter or digit: base62, the alphabet of our keys,
/// session ids and sign-in links. Compared by ranges (this runs on every request's key).
constexpr bool isBase62(std::string_view s) {
  for (const char c : s) {
    if (!isAsciiAlnum(c)) {
      return false;
    }
  }
  return true;
}

/// `s` without the spaces and tabs at either end (HTTP's optional whitespace, RFC 9110 §5.6.3).
std::string_view trimOws(std::string_view s);

/// True when `a` and `b` are equal but for the case of ASCII letters (header names).
bool equalsIgnoreCase(std::string_view a, std::string_view b);

/// True when `s` (UTF-8) holds a control character: C0 (below U+0020), DEL, or C1 (U+0080 to
/// U+009F).
bool hasControlCharacters(std::string_view s);

/// The most bytes writeMillis() writes.
constexpr std::size_t kMaxMillisBytes = 24;

/// Writes `us` in milliseconds at `out` as a JSON number with at most three decimals, the text
/// RapidJSON writes for the double us / 1000 ("12.345", "12.3", "12.0", "-0.5"), without
/// formatting a double; returns the end. `out` has room for kMaxMillisBytes.
char* writeMillis(std::chrono::microseconds us, char* out);

/// The number of code points of UTF-8 text (its continuation bytes not counted).
std::size_t codePoints(std::string_view s);

/// The longest start of `s` (UTF-8) of at most `max_bytes` that ends on a character's boundary:
/// a cut that never splits a character.
std::string_view utf8Prefix(std::string_view s, std::size_t max_bytes);

/// Writes `bytes` in lower-case hex at `out`, two characters a byte, without allocating.
void writeHex(std::span<const std::uint8_t> bytes, char* out);

/// `bytes` in lower-case hex.
std::string hex(std::span<const std::uint8_t> bytes);

/// `s` with every byte outside printable ASCII written as `\xNN`, at most `max_bytes` of input
/// (then "…"): client or upstream bytes made safe to put into an error message or a log line.
std::string printable(std::string_view s, std::size_t max_bytes = 200);

/// A time in milliseconds since the Unix epoch as RFC 3339 UTC, e.g. 2026-11-22T10:15:30Z; its
/// first ten characters are the UTC day.
std::string utcTimestamp(std::int64_t ms);

/// The start of a UTC day written "2026-11-01", in milliseconds since the Unix epoch; nullopt for
/// any other text.
std::optional<std::int64_t> parseUtcDay(std::string_view day);

/// `s` with every byte but RFC 3986's unreserved characters (ALPHA, DIGIT, "-", ".", "_", "~")
/// written as %XX, upper-case: a query's value, a path's segment, AWS's canonical request.
std::string percentEncode(std::string_view s);

/// `s` with its %XX escapes decoded (RFC 3986 §2.1); nullopt for a malformed escape.
std::optional<std::string> percentDecode(std::string_view s);

}  // namespace tollgate::text
