// The escrow book alone, without a store: what is at hand is spent in memory only when trusted in
// the current epoch, loans go back when the store refuses, a reclaimed escrow is forgotten and
// replaced by a new row, and idle money is handed back.
#include "billing/escrow.hpp"

#include <gtest/gtest.h>

namespace tollgate::billing {
namespace {

using Clock = EscrowBook::Clock;

class Escrows : public ::testing::Test {
 protected:
  /// An escrow for team "t" with `at_hand` at hand, its row found in `epoch`.
  EscrowBook::Draw open(money::Pico at_hand, std::uint64_t epoch = 1) {
    const EscrowBook::Draw d = book_.draw("t", 10, now_);
    book_.granted("t", d.hold_id, at_hand, epoch);
    return d;
  }

  EscrowBook book_;
  Clock::time_point now_ = Clock::now();
};

TEST_F(Escrows, ANewEscrowHasANewRowAndNothingAtHand) {
  const EscrowBook::Draw d = book_.draw("t", 10, now_);
  EXPECT_FALSE(d.hold_id.empty());
  EXPECT_FALSE(d.existing);
  EXPECT_EQ(d.lent, 0);
  EXPECT_FALSE(book_.take("t", 1, 1, now_));
}

TEST_F(Escrows, WhatIsAtHandIsSpentOnlyWhileTrustedInTheEpochItsRowWasFound) {
  const EscrowBook::Draw d = open(80, 1);
  EXPECT_FALSE(book_.take("t", 50, std::nullopt, now_)) << "heartbeats not trusted";
  EXPECT_FALSE(book_.take("t", 50, 2, now_)) << "a gap since its row was found";
  EXPECT_FALSE(book_.take("t", 81, 1, now_)) << "more than is at hand";
  const auto held = book_.take("t", 50, 1, now_);
  ASSERT_TRUE(held);
  EXPECT_EQ(held->id, d.hold_id);
  EXPECT_EQ(held->amount, 50);
  EXPECT_FALSE(book_.take("t", 31, 1, now_));
  EXPECT_TRUE(book_.take("t", 30, 1, now_));
}

TEST_F(Escrows, ALoanTheStoreRefusedGoesBackAndAStoredRowIsConfirmed) {
  const EscrowBook::Draw first = open(30, 1);
  const EscrowBook::Draw loan = book_.draw("t", 50, now_);
  EXPECT_EQ(loan.hold_id, first.hold_id);
  EXPECT_TRUE(loan.existing);
  EXPECT_EQ(loan.lent, 30);
  EXPECT_FALSE(book_.take("t", 1, 1, now_)) << "all of it is lent";
  book_.refused("t", loan, 2);
  EXPECT_TRUE(book_.take("t", 30, 2, now_)) << "back, and found in epoch 2";
}

TEST_F(Escrows, ASettledRequestGivesBackWhatItDidNotCost) {
  const EscrowBook::Draw d = open(0, 1);
  book_.settled("t", d.hold_id, 7, 3);
  EXPECT_FALSE(book_.take("t", 8, 3, now_));
  EXPECT_TRUE(book_.take("t", 7, 3, now_));
}

TEST_F(Escrows, AReclaimedEscrowIsForgottenAndItsRowNeverUsedAgain) {
  const EscrowBook::Draw d = open(80, 1);
  book_.gone("t", d.hold_id);
  EXPECT_FALSE(book_.take("t", 1, 1, now_));
  book_.give("t", d.hold_id, 50);  // A request admitted on it ends: nothing comes back.
  const EscrowBook::Draw next = book_.draw("t", 10, now_);
  EXPECT_NE(next.hold_id, d.hold_id);
  EXPECT_FALSE(next.existing);
  EXPECT_EQ(next.lent, 0);
}

TEST_F(Escrows, IdleMoneyIsHandedBackAndBusyMoneyStays) {
  open(80, 1);
  const EscrowBook::Draw other = book_.draw("u", 10, now_);
  book_.granted("u", other.hold_id, 5, 1);
  const auto later = now_ + std::chrono::seconds(2);
  ASSERT_TRUE(book_.take("u", 1, 1, later));  // "u" was used just now.
  const std::vector<store::Hold> back = book_.takeIdle(later, std::chrono::seconds(1), false);
  ASSERT_EQ(back.size(), 1U);
  EXPECT_EQ(back[0].team_id, "t");
  EXPECT_EQ(back[0].amount, 80);
  EXPECT_FALSE(book_.take("t", 1, 1, later));
  const std::vector<store::Hold> rest = book_.takeIdle(later, std::chrono::seconds(1), true);
  ASSERT_EQ(rest.size(), 1U);
  EXPECT_EQ(rest[0].amount, 4);
}

}  // namespace
}  // namespace tollgate::billing
