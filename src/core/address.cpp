#include "core/address.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/text.hpp"

namespace tollgate::address {
namespace {

constexpr std::array<std::uint8_t, 12> kMappedPrefix{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

}  // namespace

std::optional<Ip> parseIp(std::string_view text) {
  constexpr std::size_t kMaxText = 45;  // INET6_ADDRSTRLEN less its NUL
  if (text.empty() || text.size() > kMaxText) {
    return std::nullopt;
  }
  const std::string z(text);
  Ip ip;
  if (inet_pton(AF_INET, z.c_str(), ip.bytes.data()) == 1) {
    return ip;
  }
  if (inet_pton(AF_INET6, z.c_str(), ip.bytes.data()) != 1) {
    return std::nullopt;
  }
  if (std::memcmp(ip.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size()) == 0) {
    Ip v4;
    std::memcpy(v4.bytes.data(), ip.bytes.data() + kMappedPrefix.size(), 4);
    return v4;
  }
  ip.v6 = true;
  return ip;
}

std::string format(const Ip& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.v6 ? AF_INET6 : AF_INET, ip.bytes.data(), buf, sizeof buf);
  return buf;
}

std::optional<Cidr> parseCidr(std::string_view text) {
  const std::size_t slash = text.find('/');
  const auto ip = parseIp(text.substr(0, slash));
  if (!ip) {
    return std::nullopt;
  }
  const unsigned bits = ip->v6 ? 128 : 32;
  unsigned prefix = bits;
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty() ||
        prefix > bits) {
      return std::nullopt;
    }
  }
  const Cidr range{*ip, prefix};
  // The base must be the range's first address.
  Ip first = *ip;
  for (unsigned i = prefix; i < bits; ++i) {
    first.bytes[i / 8] &= static_cast<std::uint8_t>(~(0x80u >> (i % 8)));
  }
  if (!(first == *ip)) {
    return std::nullopt;
  }
  return range;
}

bool contains(const Cidr& range, const Ip& ip) {
  if (range.base.v6 != ip.v6) {
    return false;
  }
  const unsigned whole = range.prefix / 8;
  if (std::memcmp(range.base.bytes.data(), ip.bytes.data(), whole) != 0) {
    return false;
  }
  const unsigned rest = range.prefix % 8;
  if (rest == 0) {
    return true;
  }
  const auto mask = static_cast<std::uint8_t>(0xffu << (8 - rest));
  return (range.base.bytes[whole] & mask) == (ip.bytes[whole] & mask);
}

bool containsAny(std::span<const Cidr> ranges, const Ip& ip) {
  for (const Cidr& r : ranges) {
    if (contains(r, ip)) {
      return true;
    }
  }
  return false;
}

std::string requestSource(std::string_view peer, std::string_view forwarded_for,
                          std::span<const Cidr> trusted) {
  const auto peer_ip = parseIp(peer);
  if (trusted.empty() || !peer_ip || !containsAny(trusted, *peer_ip)) {
    return std::string(peer);
  }
  std::string_view left = forwarded_for;
  std::string left_most;  // The last proxy seen, walking leftwards.
  while (!text::trimOws(left).empty()) {
    const std::size_t comma = left.rfind(',');
    const std::string_view value =
        text::trimOws(comma == std::string_view::npos ? left : left.substr(comma + 1));
    left = comma == std::string_view::npos ? std::string_view() : left.substr(0, comma);
    if (value.empty()) {
      continue;
    }
    const auto ip = parseIp(value);
    if (!ip) {
      return text::printable(value, 64);
    }
    if (!containsAny(trusted, *ip)) {
      return format(*ip);
    }
    left_most = format(*ip);
  }
  return left_most.empty() ? std::string(peer) : left_most;
}

std::string throttleKey(std::string_view source) {
  auto ip = parseIp(source);
  if (!ip) {
    return std::string(source);
  }
  if (!ip->v6) {
    return format(*ip);
  }
  std::fill(ip->bytes.begin() + 8, ip->bytes.end(), std::uint8_t{0});
  return format(*ip) + "/64";
}

}  // namespace tollgate::address
