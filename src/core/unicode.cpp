#include "core/unicode.hpp"

#include <unicode/uchar.h>
#include <unicode/uidna.h>
#include <unicode/unorm2.h>
#include <unicode/uspoof.h>
#include <unicode/ustring.h>
#include <unicode/utf8.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace tollgate::unicode {
namespace {

constexpr char32_t kLastBmp = 0xFFFF;
constexpr unsigned char kFirstPrintable = 0x20;
constexpr unsigned char kDelete = 0x7f;

/// Throws for an ICU failure that well-formed input cannot cause (its data missing).
void require(UErrorCode status, const char* what) {
  if (U_FAILURE(status)) {
    throw std::runtime_error(std::string("ICU ") + what + ": " + u_errorName(status));
  }
}

std::u16string toUtf16(std::string_view s) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strFromUTF8(nullptr, 0, &length, s.data(), static_cast<int32_t>(s.size()), &status);
  std::u16string out(static_cast<std::size_t>(length), u'\0');
  status = U_ZERO_ERROR;
  u_strFromUTF8(out.data(), length, nullptr, s.data(), static_cast<int32_t>(s.size()), &status);
  require(status, "UTF-8 to UTF-16");
  return out;
}

std::string toUtf8(std::u16string_view s) {
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = 0;
  u_strToUTF8(nullptr, 0, &length, s.data(), static_cast<int32_t>(s.size()), &status);
  std::string out(static_cast<std::size_t>(length), '\0');
  status = U_ZERO_ERROR;
  u_strToUTF8(out.data(), length, nullptr, s.data(), static_cast<int32_t>(s.size()), &status);
  require(status, "UTF-16 to UTF-8");
  return out;
}

bool hidden(UChar32 c) {
  switch (u_charType(c)) {
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
    case U_UNASSIGNED:
      return true;
    default:
      return false;
  }
}

/// The spoof checker, made once: its skeletons are const operations, safe from any thread.
const USpoofChecker& spoofChecker() {
  static const std::unique_ptr<USpoofChecker, void (*)(USpoofChecker*)> checker = [] {
    UErrorCode status = U_ZERO_ERROR;
    USpoofChecker* c = uspoof_open(&status);
    require(status, "uspoof_open");
    return std::unique_ptr<USpoofChecker, void (*)(USpoofChecker*)>(c, uspoof_close);
  }();
  return *checker;
}

/// The UTS #46 converter, made once (const, safe from any thread): nontransitional processing,
/// as browsers do, and the STD3 rules of host names.
const UIDNA& idna() {
  static const std::unique_ptr<UIDNA, void (*)(UIDNA*)> converter = [] {
    UErrorCode status = U_ZERO_ERROR;
    UIDNA* c = uidna_openUTS46(UIDNA_USE_STD3_RULES | UIDNA_CHECK_BIDI | UIDNA_CHECK_CONTEXTJ |
                                   UIDNA_NONTRANSITIONAL_TO_ASCII,
                               &status);
    require(status, "uidna_openUTS46");
    return std::unique_ptr<UIDNA, void (*)(UIDNA*)>(c, uidna_close);
  }();
  return *converter;
}

}  // namespace

std::string nfc(std::string_view s) {
  UErrorCode status = U_ZERO_ERROR;
  const UNormalizer2* n = unorm2_getNFCInstance(&status);
  require(status, "unorm2_getNFCInstance");
  const std::u16string in = toUtf16(s);
  const auto in_length = static_cast<int32_t>(in.size());
  if (unorm2_isNormalized(n, in.data(), in_length, &status) && U_SUCCESS(status)) {
    return std::string(s);
  }
  status = U_ZERO_ERROR;
  const int32_t length = unorm2_normalize(n, in.data(), in_length, nullptr, 0, &status);
  std::u16string out(static_cast<std::size_t>(length), u'\0');
  status = U_ZERO_ERROR;
  unorm2_normalize(n, in.data(), in_length, out.data(), length, &status);
  require(status, "unorm2_normalize");
  return toUtf8(out);
}

std::optional<char32_t> firstHidden(std::string_view s) {
  const auto length = static_cast<int32_t>(s.size());
  for (int32_t i = 0; i < length;) {
    UChar32 c = 0;
    U8_NEXT(s.data(), i, length, c);
    if (c >= 0 && hidden(c)) {
      return static_cast<char32_t>(c);
    }
  }
  return std::nullopt;
}

std::string skeleton(std::string_view s) {
  UErrorCode status = U_ZERO_ERROR;
  const auto length = static_cast<int32_t>(s.size());
  const int32_t needed =
      uspoof_getSkeletonUTF8(&spoofChecker(), 0, s.data(), length, nullptr, 0, &status);
  std::string out(static_cast<std::size_t>(needed), '\0');
  status = U_ZERO_ERROR;
  uspoof_getSkeletonUTF8(&spoofChecker(), 0, s.data(), length, out.data(), needed, &status);
  require(status, "uspoof_getSkeletonUTF8");
  return out;
}

std::string codePointName(char32_t c) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(c));
  return buf;
}

std::string visible(std::string_view s, std::size_t max_bytes) {
  const auto length = static_cast<int32_t>(std::min(s.size(), max_bytes));
  std::string out;
  out.reserve(static_cast<std::size_t>(length) + 8);
  char buf[16];
  for (int32_t i = 0; i < length;) {
    const int32_t start = i;
    UChar32 c = 0;
    U8_NEXT(s.data(), i, length, c);
    if (c < 0) {
      for (int32_t b = start; b < i; ++b) {
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(s[b]));
        out.append(buf);
      }
    } else if (c == '\\') {
      out.append("\\\\");
    } else if (c < kFirstPrintable || (c >= kDelete && u_charType(c) == U_CONTROL_CHAR) ||
               hidden(c)) {
      std::snprintf(buf, sizeof buf, c > static_cast<UChar32>(kLastBmp) ? "\\U%08X" : "\\u%04X",
                    static_cast<unsigned>(c));
      out.append(buf);
    } else {
      out.append(s.substr(start, i - start));
    }
  }
  if (s.size() > max_bytes) {
    out.append("\u2026");
  }
  return out;
}

std::optional<std::string> hostToAscii(std::string_view host) {
  UErrorCode status = U_ZERO_ERROR;
  UIDNAInfo info = UIDNA_INFO_INITIALIZER;
  const auto length = static_cast<int32_t>(host.size());
  const int32_t needed =
      uidna_nameToASCII_UTF8(&idna(), host.data(), length, nullptr, 0, &info, &status);
  if (status != U_BUFFER_OVERFLOW_ERROR && U_FAILURE(status)) {
    return std::nullopt;
  }
  std::string out(static_cast<std::size_t>(needed), '\0');
  status = U_ZERO_ERROR;
  info = UIDNA_INFO_INITIALIZER;
  uidna_nameToASCII_UTF8(&idna(), host.data(), length, out.data(), needed, &info, &status);
  if (U_FAILURE(status) || info.errors != 0 || out.empty()) {
    return std::nullopt;
  }
  return out;
}

}  // namespace tollgate::unicode
