#include <gtest/gtest.h>

#include "console/console_call.hpp"

namespace tollgate::console {
namespace {

TEST(FencedGateways, NamesEachGatewayWithItsHostPidAndLastSeenTime) {
  accounts::Propagation p{7, {}};
  EXPECT_EQ(fencedGateways(p), "") << "every gateway confirmed: no header";
  p.lagging.push_back({"gw-1", "host-a", 42, 1'764'151'200'000, 6, 2'000, 3'500});
  p.lagging.push_back({"gw-2", "bad\r\nhost", 7, 1'764'151'201'000, 5, 500, 1'600});
  EXPECT_EQ(fencedGateways(p),
            "gw-1 (host host-a, pid 42, last seen 2025-11-26T10:00:00Z), "
            "gw-2 (host bad\\x0d\\x0ahost, pid 7, last seen 2025-11-26T10:00:01Z)");
}

}  // namespace
}  // namespace tollgate::console
