// The account operations called as a team member (as the console will), on a SQLite store: the
// permission table is enforced, the last owner is kept, keys and invitations follow their rules.
#include "accounts/accounts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "auth/api_key.hpp"
#include "store/migrations.hpp"
#include "temp_dir.hpp"

namespace tollgate::accounts {
namespace {

class AccountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ =
        std::make_unique<store::Store>(store::connect({store::Engine::Sqlite, dir_.file("t.db")}));
    store::migrate(store_->connection());
    acc_ = std::make_unique<Accounts>(*store_, "a server secret for the unit tests",
                                      PropagationPolicy{std::chrono::milliseconds(0)});
    acc_->createTeam(op_, "acme");
    for (const auto& [email, role] : {std::pair{"own@x.io", "owner"},
                                      {"adm@x.io", "admin"},
                                      {"mem@x.io", "member"},
                                      {"view@x.io", "viewer"}}) {
      acc_->addUser(email, "");
      acc_->addMember(op_, "acme", email, role);
    }
  }
  void TearDown() override {
    acc_.reset();
    store_.reset();
  }

  static Actor as(const char* email) { return Actor{std::string(email)}; }

  test::TempDir dir_{"tollgate-accounts-test"};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Accounts> acc_;
  const Actor op_{};
};

TEST_F(AccountsTest, KeysAreCreatedByOwnersAdminsAndMembersButNotViewers) {
  for (const char* who : {"own@x.io", "adm@x.io", "mem@x.io"}) {
    const CreatedKey k = acc_->createKey(as(who), "acme", std::string("key of ") + who, {});
    EXPECT_EQ(k.key.created_by, who);
    EXPECT_EQ(auth::parseKey(k.full).shape, auth::KeyShape::Ok);
    // Only a keyed hash of the secret is stored.
    EXPECT_EQ(k.key.secret_hash.find(std::string(auth::parseKey(k.full).secret)),
              std::string::npos);
  }
  EXPECT_THROW(acc_->createKey(as("view@x.io"), "acme", "nope", {}), UserError);
  EXPECT_THROW(acc_->createKey(as("stranger@x.io"), "acme", "nope", {}), UserError);
}

TEST_F(AccountsTest, MembersRevokeTheirOwnKeysAdminsAnyKey) {
  const CreatedKey mine = acc_->createKey(as("mem@x.io"), "acme", "mine", {});
  const CreatedKey theirs = acc_->createKey(as("adm@x.io"), "acme", "theirs", {});
  EXPECT_THROW(acc_->revokeKey(as("mem@x.io"), theirs.key.public_id), UserError);
  EXPECT_NO_THROW(acc_->revokeKey(as("mem@x.io"), mine.key.public_id));
  EXPECT_NO_THROW(acc_->revokeKey(as("adm@x.io"), theirs.full));
  EXPECT_THROW(acc_->revokeKey(as("adm@x.io"), theirs.key.public_id), UserError);  // twice
}

TEST_F(AccountsTest, OnlyOwnersManageOwnersAndTheLastOwnerStays) {
  acc_->addUser("new@x.io", "");
  EXPECT_THROW(acc_->addMember(as("mem@x.io"), "acme", "new@x.io", "viewer"), UserError);
  EXPECT_THROW(acc_->addMember(as("adm@x.io"), "acme", "new@x.io", "owner"), UserError);
  EXPECT_NO_THROW(acc_->addMember(as("adm@x.io"), "acme", "new@x.io", "viewer"));
  EXPECT_THROW(acc_->setRole(as("adm@x.io"), "acme", "own@x.io", "member"), UserError);
  EXPECT_THROW(acc_->setRole(as("own@x.io"), "acme", "own@x.io", "member"), UserError);
  EXPECT_THROW(acc_->removeMember(op_, "acme", "own@x.io"), UserError);
  acc_->setRole(as("own@x.io"), "acme", "adm@x.io", "owner");
  EXPECT_NO_THROW(acc_->setRole(as("adm@x.io"), "acme", "own@x.io", "member"));
  EXPECT_THROW(acc_->removeMember(as("adm@x.io"), "acme", "adm@x.io"), UserError);
}

TEST_F(AccountsTest, InvitationsAreSingleUseBoundAndMayExpire) {
  EXPECT_THROW(acc_->createInvite(as("mem@x.io"), "acme", "viewer", {}, std::chrono::hours(1)),
               UserError);
  EXPECT_THROW(acc_->createInvite(as("adm@x.io"), "acme", "owner", {}, std::chrono::hours(1)),
               UserError);
  const CreatedInvite inv =
      acc_->createInvite(as("adm@x.io"), "acme", "member", "Guest@x.io", std::chrono::hours(1));
  EXPECT_THROW(acc_->acceptInvite(inv.token, "other@x.io"), UserError);
  acc_->acceptInvite(inv.token, "guest@x.io");
  EXPECT_THROW(acc_->acceptInvite(inv.token, "guest@x.io"), UserError);
  EXPECT_EQ(store_->roleOf(store_->findTeam("acme")->id, store_->findUser("guest@x.io")->id),
            "member");

  // An invitation past its expiry is refused.
  const CreatedInvite old =
      acc_->createInvite(op_, "acme", "viewer", {}, std::chrono::milliseconds(1));
  ::usleep(5'000);
  try {
    acc_->acceptInvite(old.token, "late@x.io");
    FAIL() << "an expired invitation was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("expired"), std::string::npos) << e.what();
  }
}

TEST_F(AccountsTest, NamesAreCheckedAndStoredVerbatim) {
  EXPECT_THROW(acc_->createTeam(op_, std::string(101, 'x')), UserError);
  EXPECT_THROW(acc_->createTeam(op_, "tab\there"), UserError);
  EXPECT_THROW(acc_->createTeam(op_, "c1\xc2\x85"), UserError);  // U+0085, a C1 control
  EXPECT_THROW(acc_->createTeam(op_, "bad\xff"), UserError);
  EXPECT_THROW(acc_->createTeam(op_, ""), UserError);
  const std::string sql = "x'); DELETE FROM teams; --";
  EXPECT_EQ(acc_->createTeam(op_, sql).name, sql);
  EXPECT_EQ(acc_->addUser("o'brien@x.io", sql).name, sql);
  EXPECT_EQ(acc_->showTeam(op_, sql).name, sql);
  EXPECT_EQ(acc_->listTeams(op_).size(), 2u);
  // A member sees only their teams.
  EXPECT_EQ(acc_->listTeams(as("mem@x.io")).size(), 1u);
}

TEST_F(AccountsTest, ChangesMoveTheSequenceThatGatewaysFollow) {
  const std::int64_t before = store_->changeSeq();
  const CreatedKey k = acc_->createKey(op_, "acme", "k", {});
  EXPECT_GT(k.propagation.seq, before);
  EXPECT_GT(acc_->revokeKey(op_, k.key.public_id).seq, k.propagation.seq);
  EXPECT_GT(acc_->setTeamActive(op_, "acme", false).seq, k.propagation.seq + 1);
  // A gateway alive and behind is reported once the (here zero) wait ends.
  store_->registerGateway({"gw-1", "host", 42, 0, 0});
  const Propagation p = acc_->setTeamActive(op_, "acme", true);
  ASSERT_EQ(p.lagging.size(), 1u);
  EXPECT_EQ(p.lagging[0].id, "gw-1");
}

}  // namespace
}  // namespace tollgate::accounts
