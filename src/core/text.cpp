#include "core/text.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ctime>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace tollgate::text {
namespace {

constexpr unsigned char kContinuationMask = 0xC0;
constexpr unsigned char kContinuation = 0x80;
constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;

constexpr std::uint64_t kLowBits = 0x0101010101010101ULL;

/// The high bit of each byte of `word` that is zero. Exact up to the first such byte (a borrow
/// may mark bytes above it), so the lowest bit set says which byte is the first.
constexpr std::uint64_t zeroBytes(std::uint64_t word) {
  return (word - kLowBits) & ~word & kHighBits;
}

/// The same for bytes below 0x20.
constexpr std::uint64_t controlBytes(std::uint64_t word) {
  return (word - 0x20 * kLowBits) & ~word & kHighBits;
}

bool isContinuation(unsigned char c) { return (c & kContinuationMask) == kContinuation; }

/// The length of the sequence that starts with `lead`, or 0 when no sequence may start with it.
std::size_t sequenceLength(unsigned char lead) {
  if (lead >= 0xC2 && lead <= 0xDF) {
    return 2;
  }
  if (lead >= 0xE0 && lead <= 0xEF) {
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    return 4;
  }
  return 0;
}

/// The range the second byte must fall in after `lead`, which rules out overlong forms,
/// surrogates (U+D800–U+DFFF) and code points above U+10FFFF.
bool secondByteFits(unsigned char lead, unsigned char second) {
  switch (lead) {
    case 0xE0:
      return second >= 0xA0 && second <= 0xBF;
    case 0xED:
      return second >= 0x80 && second <= 0x9F;
    case 0xF0:
      return second >= 0x90 && second <= 0xBF;
    case 0xF4:
      return second >= 0x80 && second <= 0x8F;
    default:
      return isContinuation(second);
  }
}

/// How many ASCII bytes `p` starts with, of `n`: sixteen at a time, then eight, the last of
/// them in a word that overlaps bytes already seen (the first high byte in it is then past
/// them), so that a short text is not walked byte by byte.
std::size_t asciiPrefix(const unsigned char* p, std::size_t n) {
  std::size_t i = 0;
#ifdef __SSE2__
  for (; i + sizeof(__m128i) <= n; i += sizeof(__m128i)) {
    const auto high = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i))));
    if (high != 0) {
      return i + static_cast<std::size_t>(std::countr_zero(high));
    }
  }
#endif
  if constexpr (std::endian::native == std::endian::little) {  // Byte k is bits 8k to 8k+7.
    std::uint64_t word;
    for (; i + sizeof word <= n; i += sizeof word) {
      std::memcpy(&word, p + i, sizeof word);
      if ((word & kHighBits) != 0) {
        return i + static_cast<std::size_t>(std::countr_zero(word & kHighBits)) / 8;
      }
    }
    if (i < n && n >= sizeof word) {
      std::memcpy(&word, p + n - sizeof word, sizeof word);
      return (word & kHighBits) == 0
                 ? n
                 : n - sizeof word +
                       static_cast<std::size_t>(std::countr_zero(word & kHighBits)) / 8;
    }
  }
  while (i < n && p[i] < kContinuation) {
    ++i;
  }
  return i;
}

}  // namespace

bool isValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  std::size_t i = 0;
  while (i < n) {
    i += asciiPrefix(p + i, n - i);  // Most text is ASCII.
    if (i == n) {
      break;
    }
    const unsigned char lead = p[i];
    const std::size_t len = sequenceLength(lead);
    if (len == 0 || i + len > n || !secondByteFits(lead, p[i + 1])) {
      return false;
    }
    for (std::size_t k = 2; k < len; ++k) {
      if (!isContinuation(p[i + k])) {
        return false;
      }
    }
    i += len;
  }
  return true;
}

std::size_t jsonPlainPrefix(std::string_view s) {
  const char* p = s.data();
  const std::size_t n = s.size();
  std::size_t i = 0;
#ifdef __SSE2__
  // Sixteen bytes at a time; what is left, below, eight at a time and then one by one.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i control = _mm_set1_epi8(0x1F);  // max(b, 0x1F) == 0x1F exactly when b < 0x20.
  for (; i + sizeof(__m128i) <= n; i += sizeof(__m128i)) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    const __m128i stops =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(b, quote), _mm_cmpeq_epi8(b, backslash)),
                     _mm_cmpeq_epi8(_mm_max_epu8(b, control), control));
    if (const auto mask = static_cast<unsigned>(_mm_movemask_epi8(stops)); mask != 0) {
      return i + static_cast<std::size_t>(std::countr_zero(mask));
    }
  }
#endif
  if constexpr (std::endian::native == std::endian::little) {  // Byte k is bits 8k to 8k+7.
    const auto stopsIn = [p](std::size_t at) {
      std::uint64_t word;
      std::memcpy(&word, p + at, sizeof word);
      return zeroBytes(word ^ ('"' * kLowBits)) | zeroBytes(word ^ ('\\' * kLowBits)) |
             controlBytes(word);
    };
    for (; i + sizeof(std::uint64_t) <= n; i += sizeof(std::uint64_t)) {
      if (const std::uint64_t stops = stopsIn(i); stops != 0) {
        return i + static_cast<std::size_t>(std::countr_zero(stops)) / 8;
      }
    }
    if (i < n && n >= sizeof(std::uint64_t)) {
      // The last bytes in a word overlapping those already seen, which hold no stop: the first
      // stop in it is past them. Exact up to the first stop, as zeroBytes is.
      const std::size_t at = n - sizeof(std::uint64_t);
      const std::uint64_t stops = stopsIn(at);
      return stops == 0 ? n : at + static_cast<std::size_t>(std::countr_zero(stops)) / 8;
    }
  }
  while (i < n && p[i] != '"' && p[i] != '\\' && static_cast<unsigned char>(p[i]) >= 0x20) {
    ++i;
  }
  return i;
}

char* writeMillis(std::chrono::microseconds us, char* out) {
  constexpr std::uint64_t kMicrosPerMilli = 1000;
  constexpr std::uint64_t kTen = 10;
  const std::int64_t n = us.count();
  const std::uint64_t magnitude =
      n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  // "-", up to 16 digits (2^63 us is 9.2e15 ms), "." and 3 more.
  char* p = out;
  if (n < 0) {
    *p++ = '-';
  }
  p = std::to_chars(p, out + kMaxMillisBytes, magnitude / kMicrosPerMilli).ptr;
  *p++ = '.';
  const std::uint64_t fraction = magnitude % kMicrosPerMilli;
  const std::array<char, 3> digits{static_cast<char>('0' + fraction / (kTen * kTen)),
                                   static_cast<char>('0' + fraction / kTen % kTen),
                                   static_cast<char>('0' + fraction % kTen)};
  std::size_t kept = digits.size();
  while (kept > 1 && digits[kept - 1] == '0') {  // Trailing zeros go, one digit stays.
    --kept;
  }
  return std::copy_n(digits.begin(), kept, p);
}

bool isMediaType(std::string_view content_type, std::string_view type) {
  if (content_type.size() < type.size()) {
    return false;
  }
  for (std::size_t i = 0; i < type.size(); ++i) {
    if (lowerAscii(content_type[i]) != type[i]) {
      return false;
    }
  }
  return content_type.size() == type.size() || content_type[type.size()] == ';' ||
         content_type[type.size()] == ' ';
}

std::string lowerAscii(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = lowerAscii(c);
  }
  return out;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return lowerAscii(x) == lowerAscii(y);
         });
}

void writeHex(std::span<const std::uint8_t> bytes, char* out) {
  // Each byte's two digits at once, from a table of the 256 pairs: ids and trace headers are
  // written on every request.
  static constexpr std::array<char, 512> kPairs = [] {
    constexpr std::string_view kHex = "0123456789abcdef";
    std::array<char, 512> pairs{};
    for (std::size_t byte = 0; byte < 256; ++byte) {
      pairs[2 * byte] = kHex[byte >> 4];
      pairs[2 * byte + 1] = kHex[byte & 0x0F];
    }
    return pairs;
  }();
  for (const std::uint8_t b : bytes) {
    std::memcpy(out, &kPairs[2 * std::size_t{b}], 2);
    out += 2;
  }
}

std::string hex(std::span<const std::uint8_t> bytes) {
  std::string out(2 * bytes.size(), '0');
  writeHex(bytes, out.data());
  return out;
}

std::string printable(std::string_view s, std::size_t max_bytes) {
  constexpr char kHex[] = "0123456789abcdef";
  constexpr unsigned char kFirstPrintable = 0x20;
  constexpr unsigned char kDelete = 0x7f;
  std::string out;
  out.reserve(std::min(s.size(), max_bytes) + 8);
  for (std::size_t i = 0; i < s.size() && i < max_bytes; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= kFirstPrintable && c < kDelete && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out.append("\\x").push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  if (s.size() > max_bytes) {
    out.append("\u2026");
  }
  return out;
}

std::string_view trimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

std::optional<std::int64_t> parseUtcDay(std::string_view day) {
  if (day.size() != 10 || day[4] != '-' || day[7] != '-') {
    return std::nullopt;
  }
  const std::string text(day);
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%d", &tm);
  if (end == nullptr || *end != '\0') {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(timegm(&tm)) * 1000;
}

std::optional<std::string> percentDecode(std::string_view s) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    const int hi = i + 2 < s.size() ? hex(s[i + 1]) : -1;
    const int lo = hi >= 0 ? hex(s[i + 2]) : -1;
    if (lo < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

bool hasControlCharacters(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      return true;
    }
    // C1 controls, U+0080 to U+009F, are C2 80 to C2 9F in UTF-8.
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      return true;
    }
  }
  return false;
}

std::size_t codePoints(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) {
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

std::string_view utf8Prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) {
    return s;
  }
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) {
    --end;  // s[end] continues the character that begins before it.
  }
  return s.substr(0, end);
}

std::string utcTimestamp(std::int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string percentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += c;
    } else {
      const auto b = static_cast<unsigned char>(c);
      out += '%';
      out += kHex[b >> 4U];
      out += kHex[b & 0xFU];
    }
  }
  return out;
}

}  // namespace tollgate::text
