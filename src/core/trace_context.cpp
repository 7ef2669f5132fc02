#include "core/trace_context.hpp"

#include <algorithm>

#include "core/ids.hpp"
#include "core/text.hpp"

namespace tollgate::trace {
namespace {

constexpr std::size_t kTraceparentBytes = 55;
constexpr std::size_t kTraceIdAt = 3;
constexpr std::size_t kSpanIdAt = 36;
constexpr std::size_t kFlagsAt = 53;
constexpr std::uint8_t kSampled = 0x01;
constexpr std::size_t kMaxListMembers = 32;
constexpr std::size_t kMaxKeyBytes = 256;
constexpr std::size_t kMaxTenantBytes = 241;
constexpr std::size_t kMaxSystemBytes = 14;
constexpr std::size_t kMaxValueBytes = 256;

/// A lower-case hex digit's value; -1 for anything else (upper case included).
int hexDigit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  return -1;
}

/// Reads `out.size()` bytes of lower-case hex at `text`; false on any other character.
bool readHex(std::string_view text, std::span<std::uint8_t> out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int high = hexDigit(text[2 * i]);
    const int low = hexDigit(text[2 * i + 1]);
    if (high < 0 || low < 0) {
      return false;
    }
    out[i] = static_cast<std::uint8_t>(high << 4 | low);
  }
  return true;
}

bool allZero(std::span<const std::uint8_t> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

template <std::size_t N>
std::array<std::uint8_t, N> randomNonZero() {
  std::array<std::uint8_t, N> id{};
  do {
    for (std::size_t i = 0; i < N; i += 8) {
      const std::uint64_t r = ids::fastRandom();
      for (std::size_t j = 0; j < 8 && i + j < N; ++j) {
        id[i + j] = static_cast<std::uint8_t>(r >> (8 * j));
      }
    }
  } while (allZero(id));
  return id;
}

bool isLcAlpha(char c) { return c >= 'a' && c <= 'z'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

/// The spec's `simple-key` or one part of a `multi-tenant-key`: a lower-case letter (or, when
/// `digit_first`, a digit) then lower-case letters, digits, `_`, `-`, `*` and `/`.
bool validKeyPart(std::string_view part, std::size_t max, bool digit_first) {
  if (part.empty() || part.size() > max) {
    return false;
  }
  if (!isLcAlpha(part[0]) && !(digit_first && isDigit(part[0]))) {
    return false;
  }
  return std::all_of(part.begin() + 1, part.end(), [](char c) {
    return isLcAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '*' || c == '/';
  });
}

bool validKey(std::string_view key) {
  const std::size_t at = key.find('@');
  if (at == std::string_view::npos) {
    return validKeyPart(key, kMaxKeyBytes, false);
  }
  return validKeyPart(key.substr(0, at), kMaxTenantBytes, true) &&
         validKeyPart(key.substr(at + 1), kMaxSystemBytes, false);
}

/// Printable ASCII but `,` and `=`, not ending in a space.
bool validValue(std::string_view value) {
  if (value.empty() || value.size() > kMaxValueBytes || value.back() == ' ') {
    return false;
  }
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::optional<Parent> parseTraceparent(std::string_view value) {
  if (value.size() < kTraceparentBytes ||
      (value.size() > kTraceparentBytes && value[kTraceparentBytes] != '-')) {
    return std::nullopt;
  }
  std::array<std::uint8_t, 1> version{};
  if (!readHex(value, version) || version[0] == 0xff ||
      (version[0] == 0 && value.size() != kTraceparentBytes)) {
    return std::nullopt;
  }
  if (value[2] != '-' || value[kSpanIdAt - 1] != '-' || value[kFlagsAt - 1] != '-') {
    return std::nullopt;
  }
  Parent p;
  std::array<std::uint8_t, 1> flags{};
  if (!readHex(value.substr(kTraceIdAt), p.trace_id) ||
      !readHex(value.substr(kSpanIdAt), p.span_id) || !readHex(value.substr(kFlagsAt), flags) ||
      allZero(p.trace_id) || allZero(p.span_id)) {
    return std::nullopt;
  }
  p.flags = flags[0];
  return p;
}

bool validTracestate(std::string_view value) {
  if (value.size() > kMaxTracestateBytes) {
    return false;
  }
  std::size_t members = 0;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view member = trimmed(value.substr(0, comma));
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (member.empty()) {
      continue;
    }
    const std::size_t eq = member.find('=');
    if (eq == std::string_view::npos || !validKey(member.substr(0, eq)) ||
        !validValue(member.substr(eq + 1)) || ++members > kMaxListMembers) {
      return false;
    }
  }
  return true;
}

Context begin(std::string_view traceparent, std::string_view tracestate, double sample_ratio) {
  Context c;
  c.span_id = newSpanId();
  if (const std::optional<Parent> p = parseTraceparent(traceparent)) {
    c.trace_id = p->trace_id;
    c.parent = p->span_id;
    c.sampled = (p->flags & kSampled) != 0;
    if (validTracestate(tracestate)) {
      c.tracestate = tracestate;
    }
    return c;
  }
  c.trace_id = randomNonZero<16>();
  c.sampled = sample_ratio >= 1.0 || (sample_ratio > 0.0 && ids::fastUnit() < sample_ratio);
  return c;
}

SpanId newSpanId() { return randomNonZero<8>(); }

std::string traceparent(const Context& trace, const SpanId& span) {
  // "00-" trace id "-" span id "-" flags, written in place.
  constexpr std::size_t kTraceAt = 3;
  constexpr std::size_t kSpanAt = kTraceAt + 2 * sizeof(TraceId) + 1;
  constexpr std::size_t kFlagsAt = kSpanAt + 2 * sizeof(SpanId) + 1;
  std::string out(kFlagsAt + 2, '-');
  out.replace(0, 2, "00");
  text::writeHex(trace.trace_id, out.data() + kTraceAt);
  text::writeHex(span, out.data() + kSpanAt);
  out.replace(kFlagsAt, 2, trace.sampled ? "01" : "00");
  return out;
}

}  // namespace tollgate::trace
