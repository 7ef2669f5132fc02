// Addresses and CIDR ranges as text, and a request's source behind trusted proxies: the peer
// unless it is trusted; then the right-most forwarded address that is not trusted.
#include "core/address.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tollgate::address {
namespace {

std::vector<Cidr> ranges(std::initializer_list<const char*> texts) {
  std::vector<Cidr> out;
  for (const char* t : texts) {
    const auto c = parseCidr(t);
    EXPECT_TRUE(c) << t;
    out.push_back(*c);
  }
  return out;
}

TEST(Address, ParsesBothFamiliesAndReadsMappedIpv4AsIpv4) {
  EXPECT_EQ(format(*parseIp("10.0.0.1")), "10.0.0.1");
  EXPECT_EQ(format(*parseIp("2001:DB8:0:0::1")), "2001:db8::1");
  const auto mapped = parseIp("::ffff:192.0.2.7");
  ASSERT_TRUE(mapped);
  EXPECT_FALSE(mapped->v6);
  EXPECT_EQ(format(*mapped), "192.0.2.7");
  for (const char* bad :
       {"", "10.0.0", "10.0.0.256", "[::1]", "::1%eth0", "10.0.0.1:80", "host", " 10.0.0.1"}) {
    EXPECT_FALSE(parseIp(bad)) << bad;
  }
}

TEST(Address, CidrRangesMatchTheirAddressesOnly) {
  const auto r = ranges({"10.0.0.0/8", "192.0.2.7", "fd00::/8", "2001:db8::/127"});
  EXPECT_TRUE(containsAny(r, *parseIp("10.255.1.2")));
  EXPECT_TRUE(containsAny(r, *parseIp("192.0.2.7")));
  EXPECT_FALSE(containsAny(r, *parseIp("192.0.2.8")));
  EXPECT_TRUE(containsAny(r, *parseIp("fdab::1")));
  EXPECT_TRUE(containsAny(r, *parseIp("2001:db8::1")));
  EXPECT_FALSE(containsAny(r, *parseIp("2001:db8::2")));
  EXPECT_FALSE(containsAny(r, *parseIp("11.0.0.1")));
  EXPECT_TRUE(contains(*parseCidr("0.0.0.0/0"), *parseIp("8.8.8.8")));
  EXPECT_FALSE(contains(*parseCidr("0.0.0.0/0"), *parseIp("::1"))) << "families never mix";
}

TEST(Address, RefusesRangesThatAreNotOne) {
  for (const char* bad : {"10.0.0.1/8", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/x",
                          "10.0.0.0/8/8", "10.0.0.0/-1", "fd00::1/8", "nope/8"}) {
    EXPECT_FALSE(parseCidr(bad)) << bad;
  }
}

TEST(Address, AnUntrustedPeerIsTheSourceWhateverItForwards) {
  const auto trusted = ranges({"10.0.0.0/8"});
  EXPECT_EQ(requestSource("203.0.113.9", "1.2.3.4", trusted), "203.0.113.9");
  EXPECT_EQ(requestSource("203.0.113.9", "1.2.3.4", {}), "203.0.113.9");
  EXPECT_EQ(requestSource("10.0.0.1", "1.2.3.4", {}), "10.0.0.1") << "no proxy trusted";
}

TEST(Address, BehindTrustedProxiesTheSourceIsTheRightMostUntrustedAddress) {
  const auto trusted = ranges({"10.0.0.0/8", "::1"});
  // The client wrote 6.6.6.6 itself; the proxies appended what they saw.
  EXPECT_EQ(requestSource("10.0.0.1", "6.6.6.6, 198.51.100.4, 10.0.0.2", trusted), "198.51.100.4");
  EXPECT_EQ(requestSource("::1", " 198.51.100.4 ,, ", trusted), "198.51.100.4");
  EXPECT_EQ(requestSource("10.0.0.1", "", trusted), "10.0.0.1") << "nothing forwarded";
  EXPECT_EQ(requestSource("10.0.0.1", "10.0.0.3, 10.0.0.2", trusted), "10.0.0.3")
      << "only proxies: the left-most";
  EXPECT_EQ(requestSource("10.0.0.1", "1.1.1.1, unknown", trusted), "unknown")
      << "a value that is not an address ends the walk";
  EXPECT_EQ(requestSource("10.0.0.1", "2001:DB8::1", trusted), "2001:db8::1");
}

TEST(Address, AThrottleCountsAnIpv6AddressByItsSlash64) {
  EXPECT_EQ(throttleKey("203.0.113.9"), "203.0.113.9");
  EXPECT_EQ(throttleKey("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64");
  EXPECT_EQ(throttleKey("2001:db8:1:2::ffff"), "2001:db8:1:2::/64");
  EXPECT_EQ(throttleKey("::1"), "::/64");
  EXPECT_EQ(throttleKey("unknown"), "unknown");
}

}  // namespace
}  // namespace tollgate::address
