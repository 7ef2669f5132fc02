#include "core/money.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace tollgate::money {
namespace {

TEST(Money, ParsesDecimalUsdExactly) {
  EXPECT_EQ(parseUsd("0"), 0);
  EXPECT_EQ(parseUsd("10"), 10 * kPicoPerUsd);
  EXPECT_EQ(parseUsd("0.5"), kPicoPerUsd / 2);
  EXPECT_EQ(parseUsd("0.00000015"), 150'000);  // GPT-4o mini input, per token
  EXPECT_EQ(parseUsd("0.000000075"), 75'000);  // a price a float cannot hold exactly
  EXPECT_EQ(parseUsd("1.5e-7"), 150'000);
  EXPECT_EQ(parseUsd("1.5E-07"), 150'000);
  EXPECT_EQ(parseUsd("2e3"), 2000 * kPicoPerUsd);
  EXPECT_EQ(parseUsd("0.000000000001"), 1);   // the smallest amount
  EXPECT_EQ(parseUsd("0.0000000000010"), 1);  // trailing zeros are fine
  EXPECT_EQ(parseUsd("1_000"), 1000 * kPicoPerUsd);
  EXPECT_EQ(parseUsd("9223372"), 9'223'372 * kPicoPerUsd);
}

TEST(Money, RefusesWhatIsNotAnExactNonNegativeAmount) {
  for (const char* bad :
       {"",      "-1",      "+1",   "1.",   "abc", "1e",   "1e+", "1.2.3",
        "0x10",  "inf",     "nan",  "1 ",   " 1",  "1__0", "_1",  "0.0000000000001",
        "1e-13", "9223373", "1e19", "1e999"}) {
    EXPECT_EQ(parseUsd(bad), std::nullopt) << bad;
  }
}

TEST(Money, FormatsTheShortestDecimal) {
  EXPECT_EQ(formatUsd(0), "0");
  EXPECT_EQ(formatUsd(150'000), "0.00000015");
  EXPECT_EQ(formatUsd(1), "0.000000000001");
  EXPECT_EQ(formatUsd(12 * kPicoPerUsd), "12");
  EXPECT_EQ(formatUsd(12 * kPicoPerUsd + kPicoPerUsd / 2), "12.5");
  EXPECT_EQ(formatUsd(kPicoPerUsd + 1), "1.000000000001");
  EXPECT_EQ(formatUsd(-1), "-0.000000000001");
  EXPECT_EQ(formatUsd(std::numeric_limits<Pico>::max()), "9223372.036854775807");
  EXPECT_EQ(formatUsd(-35 * kPicoPerUsd / 10), "-3.5");
  EXPECT_EQ(formatUsd(std::numeric_limits<Pico>::min()), "-9223372.036854775808");
  for (const Pico v : {Pico{1}, Pico{75'000}, Pico{123'456'789'012'345}, kPicoPerUsd}) {
    EXPECT_EQ(parseUsd(formatUsd(v)), v);
  }
}

TEST(Money, ChargesAreExactAndOverflowIsCaught) {
  // A million tokens at the smallest price, and at GPT-4o mini's: exact to the pico.
  EXPECT_EQ(times(1'000'000, 1), 1'000'000);
  EXPECT_EQ(formatUsd(*times(1'000'000, *parseUsd("0.00000015"))), "0.15");
  EXPECT_EQ(times(std::numeric_limits<std::int64_t>::max(), 2), std::nullopt);
  EXPECT_EQ(times(-1, 1), std::nullopt);
  EXPECT_EQ(plus(std::numeric_limits<Pico>::max(), 1), std::nullopt);
  EXPECT_EQ(plus(1, 2), 3);
}

}  // namespace
}  // namespace tollgate::money
