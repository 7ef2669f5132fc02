// Idempotency-Keys in a SQLite store: a key is claimed once, a retry of the same request finds it
// running or gets the charged answer byte for byte, another request under it is refused, a dead
// gateway's claim and an expired record are taken over, and only the settlement that charged the
// attempt (never a withheld one) completes its claim, with its answer only while the team's
// kept answers stay within their bound.
#include <gtest/gtest.h>

#include <array>

#include "sqlite_store.hpp"

namespace tollgate::store {
namespace {

constexpr std::int64_t kNow = 1'000'000;
constexpr std::int64_t kDay = 86'400'000;
constexpr std::int64_t kMinute = 60'000;

using Record = std::pair<std::string, std::string>;  ///< A key's state and claim id.

class IdempotencyStore : public test::SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    db_->registerGateway({"gw", "test-host", 0, 0, 0});
  }

  /// Key "k" claimed by `claim_id` on `gateway` at `now`, for a request of `digest`.
  ClaimReply claim(const std::string& claim_id, const std::string& digest = "d1",
                   const std::string& gateway = "gw", std::int64_t now = kNow) {
    return db_->claimIdempotencyKey({team_, "k", digest, claim_id, gateway, now, kDay, kMinute});
  }

  /// The state and claim id of key "k"'s record; empty when there is none.
  Record record() {
    const Rows r = db_->connection().query(
        "SELECT state, claim_id FROM idempotency_keys WHERE team_id = $1 AND key = 'k'", {team_});
    return r.empty() ? Record{} : Record{r[0].text(0), r[0].text(1)};
  }

  SpendRow row(const std::string& request_id, std::int64_t cost) {
    SpendRow r;
    r.request_id = request_id;
    r.created_at = kNow + 5;
    r.team_id = team_;
    r.key_public_id = "key";
    r.endpoint = "chat";
    r.model = "m";
    r.cost = cost;
    return r;
  }

  /// Request `request_id` (cost 4) held for, to complete `claim_id`'s claim of `key` with
  /// `answer` within the team's bound of `max_bytes`.
  Settlement held(const std::string& claim_id, std::optional<KeptAnswer> answer,
                  const std::string& request_id, const std::string& key = "k",
                  std::int64_t max_bytes = 0) {
    db_->topUp(team_, 10);
    const std::string hold_id = "hold-" + request_id;
    EXPECT_TRUE(db_->hold({hold_id, team_, 10}, "gw", 0, 0, false).held);
    Settlement::Completion done{key, claim_id, std::move(answer)};
    done.max_bytes = max_bytes;
    return Settlement{hold_id, row(request_id, 4), false, done};
  }

  /// Settles request `request_id` (cost 4) out of a hold made for it, completing `claim_id`'s
  /// claim of key "k" with `answer`.
  SettleOutcome settle(const std::string& claim_id, std::optional<KeptAnswer> answer,
                       const std::string& request_id = "req-1") {
    Settlement s = held(claim_id, std::move(answer), request_id);
    return db_->settle(std::span(&s, 1)).at(0);
  }

  /// Key `key` claimed at `now` by an attempt of its own.
  ClaimReply claimKey(const std::string& key, std::int64_t now = kNow) {
    return db_->claimIdempotencyKey(
        {team_, key, "d", "c-" + key + std::to_string(now), "gw", now, kDay, kMinute});
  }

  /// `key` claimed, and its answer of `bytes` bytes charged within the team's bound.
  void answer(const std::string& key, std::size_t bytes, std::int64_t max_bytes) {
    ASSERT_EQ(claimKey(key).outcome, ClaimOutcome::Claimed);
    Settlement s = held("c-" + key + std::to_string(kNow),
                        KeptAnswer{200, "application/json", false, std::string(bytes, 'x')},
                        "req-" + key, key, max_bytes);
    ASSERT_EQ(db_->settle(std::span(&s, 1)).at(0), SettleOutcome::Kept);
  }

  /// What the team's kept answers take, by its sum.
  std::int64_t keptBytes() {
    const Rows r =
        db_->connection().query("SELECT bytes FROM idempotency_bytes WHERE team_id = $1", {team_});
    return r.empty() ? 0 : r[0].integer(0);
  }
};

TEST_F(IdempotencyStore, ANewKeyIsClaimed) {
  EXPECT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(record(), (Record{"running", "c1"}));
}

TEST_F(IdempotencyStore, TheSameRequestIsRunningWhileItsGatewayIsAlive) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  const ClaimReply again = claim("c2", "d1", "gw-other");
  EXPECT_EQ(again.outcome, ClaimOutcome::Running);
  EXPECT_FALSE(again.answer);
  EXPECT_EQ(record().second, "c1");
}

TEST_F(IdempotencyStore, AClaimOfAGatewayUnregisteredOrNotSeenIsTakenOver) {
  ASSERT_EQ(claim("c1", "d1", "gw-unknown").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(claim("c2").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(record(), (Record{"running", "c2"}));

  // "gw" now last seen two minutes ago, by the store's clock.
  db_->connection().query("UPDATE gateways SET seen_at = seen_at - $1 WHERE id = 'gw'",
                          {2 * kMinute});
  EXPECT_EQ(claim("c3", "d1", "gw-unknown").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(record(), (Record{"running", "c3"}));
}

TEST_F(IdempotencyStore, ADifferentRequestUnderTheKeyIsAMismatch) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(claim("c2", "d2").outcome, ClaimOutcome::Mismatch) << "running";
  EXPECT_EQ(claim("c2", "d2", "gw", kNow + kDay).outcome, ClaimOutcome::Mismatch)
      << "at the window's end";
  // A dead gateway's claim is taken over by the same request only.
  db_->unregisterGateway("gw");
  EXPECT_EQ(claim("c2", "d2", "gw-other").outcome, ClaimOutcome::Mismatch);
  EXPECT_EQ(record().second, "c1");

  db_->registerGateway({"gw", "test-host", 0, 0, 0});
  ASSERT_EQ(settle("c1", KeptAnswer{200, "application/json", false, "{}"}), SettleOutcome::Kept);
  EXPECT_EQ(claim("c3", "d2").outcome, ClaimOutcome::Mismatch) << "completed";
}

TEST_F(IdempotencyStore, ACompletedAnswerIsReplayedByteForByte) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  // A NUL and bytes that are not UTF-8, as an upstream may send them.
  constexpr char kSent[] = "data: {\"a\":\"\0\xff\xfe\xc3\"}\n\ndata: [DONE]\n\n";
  const std::string body(kSent, sizeof kSent - 1);
  ASSERT_NE(body.find('\0'), std::string::npos);
  ASSERT_EQ(settle("c1", KeptAnswer{200, "text/event-stream", true, body}), SettleOutcome::Kept);
  EXPECT_EQ(record(), (Record{"completed", "c1"}));

  const ClaimReply again = claim("c2", "d1", "gw-other");
  EXPECT_EQ(again.outcome, ClaimOutcome::Completed);
  EXPECT_EQ(again.request_id, "req-1");
  ASSERT_TRUE(again.answer);
  EXPECT_EQ(again.answer->status, 200);
  EXPECT_EQ(again.answer->content_type, "text/event-stream");
  EXPECT_TRUE(again.answer->streamed);
  EXPECT_EQ(again.answer->body, body);
  // The gateway's death does not matter once completed.
  db_->unregisterGateway("gw");
  EXPECT_EQ(claim("c3").outcome, ClaimOutcome::Completed);
}

TEST_F(IdempotencyStore, AnAnswerNotKeptLeavesOnlyItsRequestId) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  ASSERT_EQ(settle("c1", std::nullopt), SettleOutcome::Kept);
  const ClaimReply again = claim("c2");
  EXPECT_EQ(again.outcome, ClaimOutcome::CompletedNotKept);
  EXPECT_EQ(again.request_id, "req-1");
  EXPECT_FALSE(again.answer);
  const Rows r = db_->connection().query(
      "SELECT body, kept, completed_at FROM idempotency_keys WHERE key = 'k'");
  EXPECT_TRUE(r.at(0).isNull(0));
  EXPECT_EQ(r.at(0).integer(1), 0);
  EXPECT_EQ(r.at(0).integer(2), kNow + 5);
}

TEST_F(IdempotencyStore, AWithheldSettlementReleasesTheClaimAReclaimedOneCompletesIt) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  // Its hold is gone and the balance (0) does not cover it: the answer is withheld, and the
  // client's retry is a fresh try.
  const KeptAnswer answer{200, "application/json", false, "{}"};
  Settlement s{"hold-gone", row("req-1", 4), true, Settlement::Completion{"k", "c1", answer}};
  ASSERT_EQ(db_->settle(std::span(&s, 1)).at(0), SettleOutcome::Withheld);
  EXPECT_EQ(record().second, "");

  ASSERT_EQ(claim("c2").outcome, ClaimOutcome::Claimed);
  Settlement t{"hold-gone", row("req-2", 4), false, Settlement::Completion{"k", "c2", answer}};
  ASSERT_EQ(db_->settle(std::span(&t, 1)).at(0), SettleOutcome::Reclaimed);
  EXPECT_EQ(record(), (Record{"completed", "c2"}));
  EXPECT_EQ(claim("c3").outcome, ClaimOutcome::Completed);
}

TEST_F(IdempotencyStore, AFailedAttemptsSettlementReleasesItsClaim) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  Settlement::Completion failed{"k", "c1", std::nullopt};
  failed.release = true;
  Settlement s{"", row("req-1", 0), false, failed};
  ASSERT_EQ(db_->settle(std::span(&s, 1)).at(0), SettleOutcome::Kept);
  EXPECT_EQ(record().second, "");
  EXPECT_EQ(claim("c2").outcome, ClaimOutcome::Claimed);
}

TEST_F(IdempotencyStore, ARunningClaimPastItsLeaseIsTakenOverFromALiveGateway) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  IdempotencyClaim again{team_, "k", "d1", "c2", "gw", kNow + 10, kDay, kMinute, 5};
  EXPECT_EQ(db_->claimIdempotencyKey(again).outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(record(), (Record{"running", "c2"}));
}

TEST_F(IdempotencyStore, OnlyTheClaimStillHeldIsCompleted) {
  ASSERT_EQ(claim("c1", "d1", "gw-unknown").outcome, ClaimOutcome::Claimed);
  ASSERT_EQ(claim("c2").outcome, ClaimOutcome::Claimed);  // Taken over.
  // The first attempt is charged after all: its request is billed, the key stays c2's.
  ASSERT_EQ(settle("c1", KeptAnswer{200, "application/json", false, "{}"}), SettleOutcome::Kept);
  EXPECT_EQ(record(), (Record{"running", "c2"}));
  EXPECT_EQ(db_->listSpend({.team_id = team_}).size(), 1u);
}

TEST_F(IdempotencyStore, OnlyItsOwnClaimReleasesARunningKey) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  db_->releaseIdempotencyKey(team_, "k", "c2");
  EXPECT_EQ(record().second, "c1");
  db_->releaseIdempotencyKey(team_, "k", "c1");
  EXPECT_EQ(record().second, "");
  EXPECT_EQ(claim("c2", "d2").outcome, ClaimOutcome::Claimed);

  ASSERT_EQ(settle("c2", std::nullopt), SettleOutcome::Kept);
  db_->releaseIdempotencyKey(team_, "k", "c2");
  EXPECT_EQ(record(), (Record{"completed", "c2"})) << "completed stays";
}

TEST_F(IdempotencyStore, ARecordOlderThanTheWindowIsNewAgain) {
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(claim("c2", "d2", "gw", kNow + kDay + 1).outcome, ClaimOutcome::Claimed)
      << "running, another request";
  EXPECT_EQ(record(), (Record{"running", "c2"}));

  ASSERT_EQ(settle("c2", KeptAnswer{200, "application/json", false, "{}"}), SettleOutcome::Kept);
  EXPECT_EQ(claim("c3", "d2", "gw", kNow + 2 * kDay).outcome, ClaimOutcome::Completed);
  EXPECT_EQ(claim("c3", "d2", "gw", kNow + 2 * kDay + 2).outcome, ClaimOutcome::Claimed)
      << "completed";
  const Rows r =
      db_->connection().query("SELECT state, created_at, request_id, body FROM idempotency_keys");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].text(0), "running");
  EXPECT_EQ(r[0].integer(1), kNow + 2 * kDay + 2);
  EXPECT_TRUE(r[0].isNull(2));
  EXPECT_TRUE(r[0].isNull(3));
}

TEST_F(IdempotencyStore, PruneForgetsRecordsCreatedBefore) {
  for (int i = 0; i < 3; ++i) {
    const std::string key = "k" + std::to_string(i);
    ASSERT_EQ(db_->claimIdempotencyKey({team_, key, "d", "c", "gw", 100 * (i + 1), kDay, kMinute})
                  .outcome,
              ClaimOutcome::Claimed);
  }
  EXPECT_EQ(db_->pruneIdempotencyKeys(250), 2);
  EXPECT_EQ(db_->pruneIdempotencyKeys(250), 0);
  const Rows r = db_->connection().query("SELECT key FROM idempotency_keys");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].text(0), "k2");
}

TEST_F(IdempotencyStore, KeysAreTheTeams) {
  const std::string other = db_->createTeam("other").id;
  ASSERT_EQ(claim("c1").outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(db_->claimIdempotencyKey({other, "k", "d2", "c2", "gw", kNow, kDay, kMinute}).outcome,
            ClaimOutcome::Claimed);
}

TEST_F(IdempotencyStore, PastTheTeamsBoundAnAnswerKeepsOnlyItsCharge) {
  answer("a", 6, 10);
  answer("b", 6, 10);  // 12 bytes would pass 10.
  answer("c", 4, 10);  // Exactly 10.
  EXPECT_EQ(claimKey("a").outcome, ClaimOutcome::Completed);
  const ClaimReply over = claimKey("b");
  EXPECT_EQ(over.outcome, ClaimOutcome::CompletedOverBound);
  EXPECT_EQ(over.request_id, "req-b");
  EXPECT_FALSE(over.answer);
  EXPECT_EQ(claimKey("c").outcome, ClaimOutcome::Completed);
  EXPECT_EQ(keptBytes(), 10);
  EXPECT_EQ(db_->listSpend({.team_id = team_}).size(), 3u) << "each charged once";
  const Rows r = db_->connection().query(
      "SELECT body, bytes, request_id FROM idempotency_keys WHERE key = 'b'");
  EXPECT_TRUE(r.at(0).isNull(0));
  EXPECT_EQ(r.at(0).integer(1), 0);
  EXPECT_EQ(r.at(0).text(2), "req-b");
  // Another team counts apart.
  std::string other = db_->createTeam("other").id;
  std::swap(team_, other);
  answer("d", 6, 10);
  EXPECT_EQ(claimKey("d").outcome, ClaimOutcome::Completed);
}

TEST_F(IdempotencyStore, AnAnswerLargerThanTheBoundIsNeverKept) {
  answer("a", 11, 10);
  EXPECT_EQ(claimKey("a").outcome, ClaimOutcome::CompletedOverBound);
  EXPECT_EQ(keptBytes(), 0);
  answer("b", 10, 10);
  EXPECT_EQ(claimKey("b").outcome, ClaimOutcome::Completed);
}

TEST_F(IdempotencyStore, OneBatchNeverPassesTheBound) {
  const KeptAnswer six{200, "application/json", false, "xxxxxx"};
  ASSERT_EQ(claimKey("a").outcome, ClaimOutcome::Claimed);
  ASSERT_EQ(claimKey("b").outcome, ClaimOutcome::Claimed);
  const std::string claim = std::to_string(kNow);
  std::array<Settlement, 2> batch{held("c-a" + claim, six, "req-a", "a", 10),
                                  held("c-b" + claim, six, "req-b", "b", 10)};
  EXPECT_EQ(db_->settle(batch), (std::vector{SettleOutcome::Kept, SettleOutcome::Kept}));
  EXPECT_EQ(claimKey("a").outcome, ClaimOutcome::Completed);
  EXPECT_EQ(claimKey("b").outcome, ClaimOutcome::CompletedOverBound);
  EXPECT_EQ(keptBytes(), 6);
}

TEST_F(IdempotencyStore, ForgottenRecordsGiveTheirBytesBack) {
  answer("a", 6, 0);  // No bound: kept, and counted all the same.
  answer("b", 6, 0);
  EXPECT_EQ(keptBytes(), 12);
  // Expired, and claimed again: its bytes go with it.
  EXPECT_EQ(claimKey("a", kNow + kDay + 1).outcome, ClaimOutcome::Claimed);
  EXPECT_EQ(keptBytes(), 6);
  EXPECT_EQ(db_->pruneIdempotencyKeys(kNow + 1), 1);
  EXPECT_EQ(keptBytes(), 0);
  answer("c", 10, 10);
  EXPECT_EQ(claimKey("c").outcome, ClaimOutcome::Completed) << "room again";
}

}  // namespace
}  // namespace tollgate::store
