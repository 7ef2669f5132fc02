// IP addresses and CIDR ranges as text (no sockets): parsing, matching, and the source of a
// request, which is its peer address or, when the peer is a trusted proxy, the right-most
// X-Forwarded-For address that is not one.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tollgate::address {

/// An IPv4 or IPv6 address; an IPv4-mapped IPv6 address (::ffff:a.b.c.d) is read as IPv4.
struct Ip {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  ///< IPv4 uses the first 4.

  bool operator==(const Ip&) const = default;
};

/// nullopt when `text` is not an address (no brackets, no zone, no port).
std::optional<Ip> parseIp(std::string_view text);
/// The address in its canonical spelling (RFC 5952 for IPv6).
std::string format(const Ip& ip);

/// A range of addresses: `base/prefix`.
struct Cidr {
  Ip base;
  unsigned prefix = 0;
};

/// "10.0.0.0/8", "fd00::/8", or a bare address (its own /32 or /128); nullopt otherwise,
/// including a base with bits set past the prefix (a typo more often than not).
std::optional<Cidr> parseCidr(std::string_view text);
bool contains(const Cidr& range, const Ip& ip);
bool containsAny(std::span<const Cidr> ranges, const Ip& ip);

/// Who sent a request: `peer` (the connection's address) unless it is in `trusted`; then the
/// right-most address of `forwarded_for` (X-Forwarded-For's values, comma-separated) that is not
/// in `trusted`. A value that is not an address ends the walk there: it is the source, as text
/// (a proxy we trust wrote it as it got it). With no value left, the left-most one.
std::string requestSource(std::string_view peer, std::string_view forwarded_for,
                          std::span<const Cidr> trusted);

/// The part of a source a throttle counts: an IPv4 address, or an IPv6 address's /64 (written
/// "2001:db8:1:2::/64"); other text as it is.
std::string throttleKey(std::string_view source);

}  // namespace tollgate::address
