#include "core/base64.hpp"

#include <array>
#include <cstdint>

namespace tollgate::base64 {
namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kUrlAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr int kInvalid = -1;

constexpr std::array<int, 256> decodingTable(std::string_view alphabet) {
  std::array<int, 256> t{};
  t.fill(kInvalid);
  for (std::size_t i = 0; i < alphabet.size(); ++i) {
    t[static_cast<unsigned char>(alphabet[i])] = static_cast<int>(i);
  }
  return t;
}

constexpr std::array<int, 256> kDecoding = decodingTable(kAlphabet);
constexpr std::array<int, 256> kUrlDecoding = decodingTable(kUrlAlphabet);

/// Encodes `bytes` with `alphabet`; a last group of one or two bytes is padded with `=` when
/// `pad` is set.
std::string encodeWith(std::string_view bytes, std::string_view alphabet, bool pad) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  const auto byte = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[k]));
  };
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += alphabet[n >> 18 & 63];
    out += alphabet[n >> 12 & 63];
    out += alphabet[n >> 6 & 63];
    out += alphabet[n & 63];
  }
  if (const std::size_t rest = bytes.size() - i; rest > 0) {
    const std::uint32_t n = byte(i) << 16 | (rest == 2 ? byte(i + 1) << 8 : 0);
    out += alphabet[n >> 18 & 63];
    out += alphabet[n >> 12 & 63];
    if (rest == 2) {
      out += alphabet[n >> 6 & 63];
    }
    if (pad) {
      out.append(3 - rest, '=');
    }
  }
  return out;
}

}  // namespace

std::string encode(std::string_view bytes) { return encodeWith(bytes, kAlphabet, true); }

std::string encodeUrl(std::string_view bytes) { return encodeWith(bytes, kUrlAlphabet, false); }

std::optional<std::string> decode(std::string_view text) {
  if (text.size() % 4 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    const int pad = last ? (text[i + 3] == '=') + (text[i + 2] == '=') : 0;
    std::uint32_t n = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int v = k >= 4 - static_cast<std::size_t>(pad)
                        ? 0
                        : kDecoding[static_cast<unsigned char>(text[i + k])];
      if (v == kInvalid) {
        return std::nullopt;
      }
      n = n << 6 | static_cast<std::uint32_t>(v);
    }
    out += static_cast<char>(n >> 16 & 255);
    if (pad < 2) {
      out += static_cast<char>(n >> 8 & 255);
    }
    if (pad < 1) {
      out += static_cast<char>(n & 255);
    }
  }
  return out;
}

std::optional<std::string> decodeUrl(std::string_view text) {
  if (text.size() % 4 == 1) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  std::uint32_t n = 0;
  int bits = 0;
  for (const char c : text) {
    const int v = kUrlDecoding[static_cast<unsigned char>(c)];
    if (v == kInvalid) {
      return std::nullopt;
    }
    n = (n << 6 | static_cast<std::uint32_t>(v)) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>(n >> bits & 255);
    }
  }
  // What is left over (2 or 4 bits) must be zero, so that each byte string has one spelling.
  if ((n & ((1u << bits) - 1)) != 0) {
    return std::nullopt;
  }
  return out;
}

}  // namespace tollgate::base64
