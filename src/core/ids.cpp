#include "core/ids.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "core/text.hpp"

namespace tollgate::ids {
namespace {

constexpr std::array<std::size_t, 4> kDashPositions{8, 13, 18, 23};
constexpr std::size_t kUuidLength = 36;
/// Where each of the five groups of an id's 16 bytes ends (8-4-4-4-12 hex digits).
constexpr std::array<std::size_t, 5> kGroupEnds{4, 6, 8, 10, 16};

bool isHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

std::mt19937_64& fastGenerator() {
  thread_local std::mt19937_64 generator = [] {
    std::random_device source;
    constexpr std::size_t kSeedWords = 8;  // 256 bits.
    std::array<std::uint32_t, kSeedWords> words{};
    for (std::uint32_t& w : words) {
      w = source();
    }
    std::seed_seq seed(words.begin(), words.end());
    return std::mt19937_64(seed);
  }();
  return generator;
}

}  // namespace

std::uint64_t fastRandom() { return fastGenerator()(); }

double fastUnit() { return std::uniform_real_distribution<double>(0.0, 1.0)(fastGenerator()); }

std::string uuidV7() {
  std::array<std::uint8_t, 16> b{};
  auto ms = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::system_clock::now().time_since_epoch())
                                           .count());
  const std::uint64_t r1 = fastRandom();
  const std::uint64_t r2 = fastRandom();
  // RFC 9562's method 1: rand_a (12 bits) counts up within a millisecond from a random start
  // below 2048, so that the ids a thread makes one after another sort in that order (audit rows
  // of the same millisecond among them); rand_b stays random.
  constexpr std::uint64_t kCounterMax = 0x0FFF;
  constexpr std::uint64_t kCounterStart = 0x07FF;
  thread_local std::uint64_t last_ms = 0;
  thread_local std::uint64_t counter = 0;
  if (ms <= last_ms) {  // The same millisecond, or a clock that stepped back.
    ms = last_ms;
    if (++counter > kCounterMax) {
      ++ms;
      counter = r1 & kCounterStart;
    }
  } else {
    counter = r1 & kCounterStart;
  }
  last_ms = ms;
  for (int i = 0; i < 6; ++i) {
    b[i] = static_cast<std::uint8_t>(ms >> (8 * (5 - i)));
  }
  for (int i = 8; i < 16; ++i) {
    b[i] = static_cast<std::uint8_t>(r2 >> (8 * (i - 8)));
  }
  b[6] = static_cast<std::uint8_t>(0x70 | (counter >> 8));  // version 7
  b[7] = static_cast<std::uint8_t>(counter & 0xFF);
  b[8] = static_cast<std::uint8_t>(0x80 | (b[8] & 0x3F));  // RFC 9562 variant

  // The groups' digits written in place, the dashes left where they stand between them.
  std::string out(kUuidLength, '-');
  char* p = out.data();
  std::size_t from = 0;
  for (const std::size_t end : kGroupEnds) {
    p += static_cast<std::size_t>(from > 0);  // Past the dash before each group but the first.
    text::writeHex(std::span(b).subspan(from, end - from), p);
    p += 2 * (end - from);
    from = end;
  }
  return out;
}

std::string unguessableHex(std::size_t bytes) {
  std::vector<std::uint8_t> raw(bytes);
  for (std::size_t filled = 0; filled < bytes;) {
    const ssize_t got = getrandom(raw.data() + filled, bytes - filled, 0);
    if (got < 0 && errno != EINTR) {
      throw std::runtime_error("the kernel's random source failed: " +
                               std::string(std::strerror(errno)));
    }
    filled += got > 0 ? static_cast<std::size_t>(got) : 0;
  }
  std::string out(2 * bytes, '0');
  text::writeHex(raw, out.data());
  return out;
}

bool isUuid(std::string_view text) {
  if (text.size() != kUuidLength) {
    return false;
  }
  std::size_t dash = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (dash < kDashPositions.size() && i == kDashPositions[dash]) {
      if (text[i] != '-') {
        return false;
      }
      ++dash;
    } else if (!isHex(text[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace tollgate::ids
