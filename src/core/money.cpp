#include "core/money.hpp"

#include <array>
#include <charconv>
#include <cstdlib>

namespace tollgate::money {
namespace {

constexpr int kPicoDigits = 12;
constexpr int kMaxExponent = 30;
constexpr int kMaxPower = 18;  // 10^19 pico-USD no longer fits an int64.

bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<Pico> parseUsd(std::string_view text) {
  // Split into digits before and after the point and a decimal exponent.
  std::string digits;  // All significant digits, without the point.
  int point = 0;       // How many of `digits` stand after the point.
  std::size_t i = 0;
  bool seen_point = false;
  bool any_digit = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (isDigit(c)) {
      any_digit = true;
      if (!(digits.empty() && c == '0')) {
        digits.push_back(c);
      }
      if (seen_point) {
        ++point;
      }
    } else if (c == '_' && i > 0 && isDigit(text[i - 1]) && i + 1 < text.size() &&
               isDigit(text[i + 1])) {
      continue;  // TOML allows 1_000.
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit || (seen_point && i > 0 && text[i - 1] == '.')) {
    return std::nullopt;
  }
  int exponent = 0;
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') {
      return std::nullopt;
    }
    ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      negative = text[i] == '-';
      ++i;
    }
    if (i == text.size()) {
      return std::nullopt;
    }
    for (; i < text.size(); ++i) {
      if (!isDigit(text[i]) || exponent > kMaxExponent * 10) {
        return std::nullopt;
      }
      exponent = exponent * 10 + (text[i] - '0');
    }
    exponent = negative ? -exponent : exponent;
  }
  // Leading zeros were dropped only before the first non-zero digit; when they stood after the
  // point, `point` still counts them, which is what the scale needs.
  const int scale = kPicoDigits + exponent - point;  // value = digits x 10^(scale - 12) USD
  Pico value = 0;
  for (std::size_t d = 0; d < digits.size(); ++d) {
    const int power = scale + static_cast<int>(digits.size() - d - 1);  // of 10, in pico
    if (digits[d] == '0') {
      continue;
    }
    if (power < 0) {
      return std::nullopt;  // A non-zero digit finer than a pico-USD.
    }
    if (power > kMaxPower) {
      return std::nullopt;  // Beyond any int64.
    }
    Pico term = digits[d] - '0';
    for (int p = 0; p < power; ++p) {
      if (__builtin_mul_overflow(term, Pico{10}, &term)) {
        return std::nullopt;
      }
    }
    if (__builtin_add_overflow(value, term, &value)) {
      return std::nullopt;
    }
  }
  return value;
}

std::string formatUsd(Pico amount) {
  const bool negative = amount < 0;
  // The magnitude as unsigned, so that INT64_MIN works too.
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(amount) : static_cast<std::uint64_t>(amount);
  const std::uint64_t whole = magnitude / static_cast<std::uint64_t>(kPicoPerUsd);
  std::uint64_t fraction = magnitude % static_cast<std::uint64_t>(kPicoPerUsd);
  // "-", up to 20 digits, "." and kPicoDigits digits: written in place, no string grown.
  std::array<char, 40> buf{};
  char* at = buf.data();
  if (negative) {
    *at++ = '-';
  }
  at = std::to_chars(at, buf.data() + buf.size(), whole).ptr;
  if (fraction != 0) {
    *at++ = '.';
    int digits = kPicoDigits;
    while (fraction % 10 == 0) {  // The shortest decimal: no trailing zeros.
      fraction /= 10;
      --digits;
    }
    for (int i = digits - 1; i >= 0; --i) {
      at[i] = static_cast<char>('0' + fraction % 10);
      fraction /= 10;
    }
    at += digits;
  }
  return {buf.data(), at};
}

std::optional<Pico> times(std::int64_t count, Pico unit_price) {
  Pico out = 0;
  if (count < 0 || unit_price < 0 || __builtin_mul_overflow(count, unit_price, &out)) {
    return std::nullopt;
  }
  return out;
}

std::optional<Pico> plus(Pico a, Pico b) {
  Pico out = 0;
  if (__builtin_add_overflow(a, b, &out)) {
    return std::nullopt;
  }
  return out;
}

}  // namespace tollgate::money
