// The account operations called as a team member (as the console will) and as the operator, on a
// SQLite store: the permission table is enforced, the last owner is kept, keys and invitations
// follow their rules, balances are added to within their limit, and every refusal says what kind
// it is in the one line the CLI prints.
#include "accounts/accounts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <limits>

#include "accounts/outcomes.hpp"
#include "auth/api_key.hpp"
#include "store/migrations.hpp"
#include "temp_dir.hpp"

namespace tollgate::accounts {
namespace {

using test::refused;
using test::value;

constexpr money::Pico kUsd = money::kPicoPerUsd;

class AccountsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ =
        std::make_unique<store::Store>(store::connect({store::Engine::Sqlite, dir_.file("t.db")}));
    store::migrate(store_->connection());
    acc_ = std::make_unique<Accounts>(*store_, "a server secret for the unit tests",
                                      PropagationPolicy{std::chrono::milliseconds(0)});
    value(acc_->createTeam(op_, "acme"));
    for (const auto& [email, role] : {std::pair{"own@x.io", "owner"},
                                      {"adm@x.io", "admin"},
                                      {"mem@x.io", "member"},
                                      {"view@x.io", "viewer"}}) {
      value(acc_->addUser(email, ""));
      value(acc_->addMember(op_, "acme", email, role));
    }
  }
  void TearDown() override {
    acc_.reset();
    store_.reset();
  }

  static Actor as(const char* email) { return Actor{std::string(email)}; }

  ::tollgate::test::TempDir dir_{"tollgate-accounts-test"};
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<Accounts> acc_;
  const Actor op_{};
};

TEST_F(AccountsTest, KeysAreCreatedByOwnersAdminsAndMembersButNotViewers) {
  for (const char* who : {"own@x.io", "adm@x.io", "mem@x.io"}) {
    const CreatedKey k = value(acc_->createKey(as(who), "acme", std::string("key of ") + who, {}));
    EXPECT_EQ(k.key.created_by, who);
    EXPECT_EQ(auth::parseKey(k.full).shape, auth::KeyShape::Ok);
    // Only a keyed hash of the secret is stored.
    EXPECT_EQ(k.key.secret_hash.find(std::string(auth::parseKey(k.full).secret)),
              std::string::npos);
  }
  EXPECT_TRUE(refused(acc_->createKey(as("view@x.io"), "acme", "nope", {}), RefusalKind::Forbidden,
                      "a team viewer may not do this"));
  EXPECT_TRUE(refused(acc_->createKey(as("stranger@x.io"), "acme", "nope", {}),
                      RefusalKind::Forbidden, "stranger@x.io is not a member of team \"acme\""));
}

TEST_F(AccountsTest, AKeysRulesAreSetByItsMakerAndChangedByOwnersAndAdminsAudited) {
  constexpr std::int64_t kHour = 3'600'000;
  const std::int64_t later = store::nowMs() + kHour;
  const CreatedKey k = value(acc_->createKey(as("mem@x.io"), "acme", "narrow", {},
                                             {later, std::vector<std::string>{"a", "b"}}));
  EXPECT_EQ(k.key.rules.expires_at, later);
  EXPECT_EQ(k.key.rules.allowed_models, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(refused(
      acc_->createKey(as("mem@x.io"), "acme", "past", {}, {store::nowMs() - 1, std::nullopt}),
      RefusalKind::Invalid, "expires_at must be in the future"));
  const std::string& id = k.key.public_id;
  const KeyRulesChange narrower{std::nullopt, std::vector<std::string>{"a"}};
  EXPECT_TRUE(refused(acc_->changeKeyRules(as("mem@x.io"), id, narrower), RefusalKind::Forbidden,
                      "a team member may not do this"));
  EXPECT_TRUE(refused(
      acc_->changeKeyRules(as("own@x.io"), id, {std::optional(store::nowMs() - 1), std::nullopt}),
      RefusalKind::Invalid));
  value(acc_->changeKeyRules(as("adm@x.io"), id, narrower));
  auto stored = store_->findKey(id);
  EXPECT_EQ(stored->rules.expires_at, later);
  EXPECT_EQ(stored->rules.allowed_models, std::vector<std::string>{"a"});
  value(acc_->changeKeyRules(op_, id, {std::optional<std::int64_t>(), std::nullopt}));
  stored = store_->findKey(id);
  EXPECT_FALSE(stored->rules.expires_at);
  EXPECT_EQ(stored->rules.allowed_models, std::vector<std::string>{"a"});
  const auto audit = store_->listAudit({});
  const auto changed = std::count_if(audit.begin(), audit.end(), [&](const store::AuditEntry& e) {
    return e.action == "key.rules_changed" && e.target.starts_with(id);
  });
  EXPECT_EQ(changed, 2);
  EXPECT_TRUE(refused(acc_->changeKeyRules(op_, "nope", narrower), RefusalKind::Invalid));
}

TEST_F(AccountsTest, MembersRevokeTheirOwnKeysAdminsAnyKey) {
  const CreatedKey mine = value(acc_->createKey(as("mem@x.io"), "acme", "mine", {}));
  const CreatedKey theirs = value(acc_->createKey(as("adm@x.io"), "acme", "theirs", {}));
  EXPECT_TRUE(refused(acc_->revokeKey(as("mem@x.io"), theirs.key.public_id), RefusalKind::Forbidden,
                      "a team member may not do this"));
  EXPECT_TRUE(acc_->revokeKey(as("mem@x.io"), mine.key.public_id));
  EXPECT_TRUE(acc_->revokeKey(as("adm@x.io"), theirs.full));
  EXPECT_TRUE(refused(acc_->revokeKey(as("adm@x.io"), theirs.key.public_id), RefusalKind::Conflict,
                      "key " + theirs.key.public_id + " is already revoked"));  // twice
}

TEST_F(AccountsTest, OnlyOwnersManageOwnersAndTheLastOwnerStays) {
  value(acc_->addUser("new@x.io", ""));
  EXPECT_TRUE(refused(acc_->addMember(as("mem@x.io"), "acme", "new@x.io", "viewer"),
                      RefusalKind::Forbidden));
  EXPECT_TRUE(refused(acc_->addMember(as("adm@x.io"), "acme", "new@x.io", "owner"),
                      RefusalKind::Forbidden, "a team admin may not do this"));
  EXPECT_TRUE(acc_->addMember(as("adm@x.io"), "acme", "new@x.io", "viewer"));
  EXPECT_TRUE(
      refused(acc_->setRole(as("adm@x.io"), "acme", "own@x.io", "member"), RefusalKind::Forbidden));
  EXPECT_TRUE(refused(acc_->setRole(as("own@x.io"), "acme", "own@x.io", "member"),
                      RefusalKind::Conflict,
                      "own@x.io is the last owner of \"acme\": make another member owner first"));
  EXPECT_TRUE(refused(acc_->removeMember(op_, "acme", "own@x.io"), RefusalKind::Conflict,
                      "own@x.io is the last owner of \"acme\" and cannot be removed"));
  EXPECT_TRUE(acc_->setRole(as("own@x.io"), "acme", "adm@x.io", "owner"));
  EXPECT_TRUE(acc_->setRole(as("adm@x.io"), "acme", "own@x.io", "member"));
  EXPECT_TRUE(
      refused(acc_->removeMember(as("adm@x.io"), "acme", "adm@x.io"), RefusalKind::Conflict));
}

TEST_F(AccountsTest, InvitationsAreSingleUseBoundAndMayExpire) {
  EXPECT_TRUE(
      refused(acc_->createInvite(as("mem@x.io"), "acme", "viewer", {}, std::chrono::hours(1)),
              RefusalKind::Forbidden));
  EXPECT_TRUE(
      refused(acc_->createInvite(as("adm@x.io"), "acme", "owner", {}, std::chrono::hours(1)),
              RefusalKind::Forbidden));
  const CreatedInvite inv = value(
      acc_->createInvite(as("adm@x.io"), "acme", "member", "Guest@x.io", std::chrono::hours(1)));
  EXPECT_TRUE(refused(acc_->acceptInvite(inv.token, "other@x.io"), RefusalKind::Forbidden,
                      "this invitation is for another email address"));
  EXPECT_TRUE(acc_->acceptInvite(inv.token, "guest@x.io"));
  EXPECT_TRUE(refused(acc_->acceptInvite(inv.token, "guest@x.io"), RefusalKind::Conflict,
                      "this invitation was already used"));
  EXPECT_EQ(store_->roleOf(store_->findTeam("acme")->id, store_->findUser("guest@x.io")->id),
            "member");

  // An invitation past its expiry is refused.
  const CreatedInvite old =
      value(acc_->createInvite(op_, "acme", "viewer", {}, std::chrono::milliseconds(1)));
  ::usleep(5'000);
  EXPECT_TRUE(refused(acc_->acceptInvite(old.token, "late@x.io"), RefusalKind::Conflict,
                      "this invitation has expired"));
}

TEST_F(AccountsTest, APreviewShowsOnlyAnInvitationMeantForTheCaller) {
  const CreatedInvite bound = value(
      acc_->createInvite(as("adm@x.io"), "acme", "member", "Guest@x.io", std::chrono::hours(1)));
  const InvitePreview shown = value(acc_->previewInvite(bound.token, "guest@x.io"));
  EXPECT_EQ(shown.team, "acme");
  EXPECT_EQ(shown.role, "member");
  EXPECT_EQ(shown.invited_by, "adm@x.io");
  const CreatedInvite open =
      value(acc_->createInvite(op_, "acme", "viewer", {}, std::chrono::hours(1)));
  EXPECT_EQ(value(acc_->previewInvite(open.token, "any@x.io")).invited_by, "operator");
  // Another's, a malformed token, a used, a revoked and an expired one: all "unknown".
  EXPECT_TRUE(refused(acc_->previewInvite(bound.token, "other@x.io"), RefusalKind::NotFound,
                      "unknown invitation"));
  EXPECT_TRUE(refused(acc_->previewInvite("inv-tollgate-short", "guest@x.io"),
                      RefusalKind::NotFound, "unknown invitation"));
  EXPECT_TRUE(acc_->acceptInvite(bound.token, "guest@x.io"));
  EXPECT_TRUE(refused(acc_->previewInvite(bound.token, "guest@x.io"), RefusalKind::NotFound));
  value(acc_->revokeInvite(op_, open.invite.id));
  EXPECT_TRUE(refused(acc_->previewInvite(open.token, "any@x.io"), RefusalKind::NotFound));
  const CreatedInvite old =
      value(acc_->createInvite(op_, "acme", "viewer", {}, std::chrono::milliseconds(1)));
  ::usleep(5'000);
  EXPECT_TRUE(refused(acc_->previewInvite(old.token, "late@x.io"), RefusalKind::NotFound));
}

TEST_F(AccountsTest, AnInvitationHoldsOnlyWhileItsMakerMayMakeIt) {
  const auto invite = [&](const Actor& who, const char* role) {
    return value(acc_->createInvite(who, "acme", role, {}, std::chrono::hours(1))).token;
  };
  const std::string own_admin = invite(as("own@x.io"), "admin");
  const std::string adm_admin = invite(as("adm@x.io"), "admin");
  const std::string adm_member = invite(as("adm@x.io"), "member");
  const std::string operators = invite(op_, "owner");
  // The admin is made viewer: what they made no longer holds; the owner's and operator's do.
  value(acc_->setRole(op_, "acme", "adm@x.io", "viewer"));
  EXPECT_TRUE(refused(acc_->acceptInvite(adm_admin, "a@x.io"), RefusalKind::Conflict,
                      "this invitation no longer holds: the person who made it may no longer "
                      "invite to this role; ask a team admin for a new one"));
  EXPECT_TRUE(refused(acc_->acceptInvite(adm_member, "a@x.io"), RefusalKind::Conflict));
  EXPECT_FALSE(store_->findUser("a@x.io")) << "a refused acceptance adds no one";
  EXPECT_TRUE(acc_->acceptInvite(own_admin, "b@x.io"));
  EXPECT_TRUE(acc_->acceptInvite(operators, "c@x.io"));
  // Back as admin, their invitation holds again; removed, it never does.
  value(acc_->setRole(op_, "acme", "adm@x.io", "admin"));
  EXPECT_TRUE(acc_->acceptInvite(adm_member, "d@x.io"));
  const std::string later = invite(as("adm@x.io"), "member");
  value(acc_->removeMember(op_, "acme", "adm@x.io"));
  EXPECT_TRUE(refused(acc_->acceptInvite(later, "adm@x.io"), RefusalKind::Conflict))
      << "a removed admin cannot rejoin with their own invitation";
}

TEST_F(AccountsTest, NamesAreCheckedAndStoredVerbatim) {
  EXPECT_TRUE(refused(acc_->createTeam(op_, std::string(101, 'x')), RefusalKind::Invalid,
                      "a team name must be at most 100 characters"));
  EXPECT_TRUE(refused(acc_->createTeam(op_, "tab\there"), RefusalKind::Invalid,
                      "a team name must not contain control characters"));
  EXPECT_TRUE(refused(acc_->createTeam(op_, "c1\xc2\x85"),  // U+0085, a C1 control
                      RefusalKind::Invalid));
  EXPECT_TRUE(refused(acc_->createTeam(op_, "bad\xff"), RefusalKind::Invalid,
                      "a team name must be valid UTF-8"));
  EXPECT_TRUE(
      refused(acc_->createTeam(op_, ""), RefusalKind::Invalid, "a team name must not be empty"));
  const std::string sql = "x'); DELETE FROM teams; --";
  EXPECT_EQ(value(acc_->createTeam(op_, sql)).name, sql);
  EXPECT_EQ(value(acc_->addUser("o'brien@x.io", sql)).name, sql);
  EXPECT_EQ(value(acc_->showTeam(op_, sql)).name, sql);
  EXPECT_EQ(value(acc_->listTeams(op_)).size(), 2u);
  // A member sees only their teams.
  EXPECT_EQ(value(acc_->listTeams(as("mem@x.io"))).size(), 1u);
}

TEST_F(AccountsTest, NamesWithInvisibleCharactersAreRefusedAndOthersStoredInNfc) {
  EXPECT_TRUE(refused(acc_->createTeam(op_, "evil\u202Etxt"), RefusalKind::Invalid,
                      "a team name must not contain U+202E (a format, private-use or unassigned "
                      "character, which does not show as itself)"));
  for (const char* hidden : {"zero\u200Bwidth", "\uFEFFbom", "join\u200Ded", "private\uE000",
                             "unassigned\u0378", "tag\U000E0041"}) {
    EXPECT_TRUE(refused(acc_->createTeam(op_, hidden), RefusalKind::Invalid)) << hidden;
    EXPECT_TRUE(refused(acc_->createKey(op_, "acme", hidden, {}), RefusalKind::Invalid)) << hidden;
  }
  // "café" typed with a combining accent is stored composed, and found either way.
  EXPECT_EQ(value(acc_->createTeam(op_, "cafe\u0301")).name, "caf\u00e9");
  EXPECT_EQ(value(acc_->showTeam(op_, "cafe\u0301")).name, "caf\u00e9");
  EXPECT_EQ(value(acc_->createKey(op_, "acme", "cle\u0301", {})).key.name, "cl\u00e9");
  EXPECT_EQ(value(checkName("a key name", "A\u030A")), "\u00C5");
}

TEST_F(AccountsTest, ANameThatLooksLikeAnExistingOneIsAConflictNamingIt) {
  EXPECT_TRUE(refused(acc_->createTeam(op_, "\u0430cme"), RefusalKind::Conflict,
                      "a team name \"\u0430cme\" looks like that of the existing team \"acme\""));
  EXPECT_TRUE(refused(acc_->createTeam(op_, "acme"), RefusalKind::Conflict,
                      "a team named \"acme\" already exists"));
  EXPECT_TRUE(acc_->createTeam(op_, "acme2"));
  const CreatedKey k = value(acc_->createKey(op_, "acme", "default", {}));
  EXPECT_TRUE(refused(acc_->createKey(op_, "acme", "d\u0435fault", {}), RefusalKind::Conflict,
                      "a key name \"d\u0435fault\" looks like that of the active key "
                      "\"default\" of team \"acme\""));
  EXPECT_TRUE(refused(acc_->createKey(as("mem@x.io"), "acme", "default", {}), RefusalKind::Conflict,
                      "team \"acme\" already has an active key named \"default\""));
  // Another team may use it; once the key is revoked, so may this one.
  EXPECT_TRUE(acc_->createKey(op_, "acme2", "d\u0435fault", {}));
  EXPECT_TRUE(acc_->revokeKey(op_, k.key.public_id));
  EXPECT_TRUE(acc_->createKey(op_, "acme", "d\u0435fault", {}));
}

TEST_F(AccountsTest, AUserCreatesTeamsUpToTheLimitTheOperatorWithout) {
  value(acc_->addUser("founder@x.io", ""));
  const Actor founder = as("founder@x.io");
  EXPECT_TRUE(acc_->createTeam(founder, "one", 0, 2));
  EXPECT_TRUE(acc_->createTeam(founder, "two", 0, 2));
  EXPECT_TRUE(refused(acc_->createTeam(founder, "three", 0, 2), RefusalKind::TeamLimit,
                      "you own 2 teams already, as many as a user may create"));
  // Teams the user is a member of but does not own do not count.
  EXPECT_TRUE(acc_->createTeam(as("adm@x.io"), "adm-own", 0, 1));
  EXPECT_TRUE(refused(acc_->createTeam(founder, "none", 0, 0), RefusalKind::TeamLimit,
                      "only the operator creates teams here"));
  EXPECT_TRUE(acc_->createTeam(op_, "operator's", 0, 0));
  EXPECT_TRUE(acc_->createTeam(founder, "unlimited"));
}

TEST_F(AccountsTest, ChecksOfNamesAndEmailsAreResults) {
  EXPECT_TRUE(checkName("a key name", "ci"));
  EXPECT_TRUE(
      refused(checkName("a key name", " "), RefusalKind::Invalid, "a key name must not be empty"));
  EXPECT_EQ(value(checkEmail("Ann@Acme.IO")), "ann@acme.io");
  for (const char* bad : {"", "@x.io", "ann@", "a@b@c", "a b@x.io", "a\n@x.io"}) {
    EXPECT_TRUE(refused(checkEmail(bad), RefusalKind::Invalid)) << bad;
  }
  EXPECT_TRUE(refused(checkEmail("not-an-email"), RefusalKind::Invalid,
                      "not an email address: \"not-an-email\""));
}

TEST_F(AccountsTest, AmountsArePlainDecimalsOfAtMostTwelvePlaces) {
  EXPECT_EQ(value(parseAmount("10")), 10 * kUsd);
  EXPECT_EQ(value(parseAmount("0.25")), kUsd / 4);
  EXPECT_EQ(value(parseAmount("0.000000000001")), 1);
  for (const char* bad :
       {"", "-5", "1e6", "1_000", ".5", "5.", "0.0000000000001", "9999999", "ten", "1.2.3"}) {
    EXPECT_TRUE(refused(parseAmount(bad), RefusalKind::Invalid,
                        "an amount must be a decimal number of USD such as 10 or 0.25, at most "
                        "12 decimal places"))
        << bad;
  }
}

TEST_F(AccountsTest, TopUpsAddWithinTheLimitAndOnlyTheOperatorMakesThem) {
  EXPECT_EQ(value(acc_->topUp(op_, "acme", 5 * kUsd)).balance, 5 * kUsd);
  EXPECT_EQ(value(acc_->topUp(op_, "acme", 0)).balance, 5 * kUsd);
  const money::Pico room = std::numeric_limits<money::Pico>::max() - 5 * kUsd;
  EXPECT_TRUE(refused(acc_->topUp(op_, "acme", room + 1), RefusalKind::Conflict,
                      "that balance would be too large"));
  EXPECT_EQ(store_->findTeam("acme")->balance, 5 * kUsd);  // A refused top-up changes nothing.
  EXPECT_EQ(value(acc_->topUp(op_, "acme", room)).balance, std::numeric_limits<money::Pico>::max());

  EXPECT_TRUE(
      refused(acc_->topUp(op_, "ghost", kUsd), RefusalKind::NotFound, "no team named \"ghost\""));
  EXPECT_TRUE(refused(acc_->topUp(as("own@x.io"), "acme", kUsd), RefusalKind::Forbidden,
                      "only the operator may add to a balance"));
  EXPECT_TRUE(refused(acc_->topUp(op_, "acme", -1), RefusalKind::Invalid));
}

TEST_F(AccountsTest, ATeamMadeWithABalanceIsMadeWholeOrNotAtAll) {
  const store::Team t = value(acc_->createTeam(op_, "rich", 12 * kUsd));
  EXPECT_EQ(t.balance, 12 * kUsd);
  EXPECT_EQ(store_->findTeam("rich")->balance, 12 * kUsd);
  // A member who makes a team owns it, but may not give it money.
  EXPECT_TRUE(refused(acc_->createTeam(as("mem@x.io"), "theirs", kUsd), RefusalKind::Forbidden));
  EXPECT_FALSE(store_->findTeam("theirs"));
  EXPECT_TRUE(acc_->createTeam(as("mem@x.io"), "theirs"));
  EXPECT_EQ(value(acc_->listMembers(as("mem@x.io"), "theirs")).at(0).role, "owner");
  // An actor who is no user makes nothing: the team's transaction is rolled back.
  EXPECT_TRUE(refused(acc_->createTeam(as("nobody@x.io"), "orphan"), RefusalKind::NotFound,
                      "no user \"nobody@x.io\" (add one with: users add EMAIL)"));
  EXPECT_FALSE(store_->findTeam("orphan"));
}

TEST_F(AccountsTest, ATeamSummaryCountsMembersAndKeysNotRevoked) {
  TeamSummary s = value(acc_->teamSummary(op_, "acme"));
  EXPECT_EQ(s.team.name, "acme");
  EXPECT_EQ(s.members, 4);
  EXPECT_EQ(s.active_keys, 0);
  value(acc_->createKey(op_, "acme", "one", {}));
  const CreatedKey two = value(acc_->createKey(as("mem@x.io"), "acme", "two", {}));
  value(acc_->revokeKey(op_, two.key.public_id));
  value(acc_->removeMember(op_, "acme", "view@x.io"));
  s = value(acc_->teamSummary(as("mem@x.io"), "acme"));
  EXPECT_EQ(s.members, 3);
  EXPECT_EQ(s.active_keys, 1);
  EXPECT_TRUE(refused(acc_->teamSummary(as("view@x.io"), "acme"), RefusalKind::Forbidden,
                      "view@x.io is not a member of team \"acme\""));
  EXPECT_TRUE(refused(acc_->teamSummary(op_, "ghost"), RefusalKind::NotFound));
}

/// One refused call, its kind and its exact line.
struct RefusalCase {
  const char* what;
  std::function<Outcome<Ok>(Accounts&)> call;
  RefusalKind kind;
  std::string message;
};

/// The outcome of `o` without its value.
template <class T>
Outcome<Ok> status(Outcome<T> o) {
  if (!o) {
    return std::move(o).error();
  }
  return Ok{};
}

TEST_F(AccountsTest, EachRefusalHasItsKindAndLine) {
  value(acc_->addUser("out@x.io", ""));
  const CreatedKey key = value(acc_->createKey(op_, "acme", "ci", {}));
  value(acc_->revokeKey(op_, key.key.public_id));
  const CreatedInvite revoked =
      value(acc_->createInvite(op_, "acme", "viewer", {}, std::chrono::hours(1)));
  value(acc_->revokeInvite(op_, revoked.invite.id));
  const Actor op;
  using enum RefusalKind;
  const std::vector<RefusalCase> cases = {
      {"duplicate team", [&](Accounts& a) { return status(a.createTeam(op, "acme")); }, Conflict,
       "a team named \"acme\" already exists"},
      {"unknown team", [&](Accounts& a) { return status(a.showTeam(op, "ghost")); }, NotFound,
       "no team named \"ghost\""},
      {"suspend unknown", [&](Accounts& a) { return status(a.setTeamActive(op, "ghost", false)); },
       NotFound, "no team named \"ghost\""},
      {"admin suspends",
       [&](Accounts& a) { return status(a.setTeamActive(as("adm@x.io"), "acme", false)); },
       Forbidden, "a team admin may not do this"},
      {"admin denies dryruns",
       [&](Accounts& a) { return status(a.setTeamDryrun(as("adm@x.io"), "acme", false)); },
       Forbidden, "a team admin may not do this"},
      {"duplicate user", [&](Accounts& a) { return status(a.addUser("OWN@x.io", "")); }, Conflict,
       "a user \"own@x.io\" already exists"},
      {"bad display name",
       [&](Accounts& a) {
         return status(a.addUser("esc@x.io",
                                 "a\x1b"
                                 "b"));
       },
       Invalid, "a display name must not contain control characters"},
      {"bad role", [&](Accounts& a) { return status(a.addMember(op, "acme", "out@x.io", "boss")); },
       Invalid, "unknown role \"boss\": owner, admin, member or viewer"},
      {"unknown user",
       [&](Accounts& a) { return status(a.addMember(op, "acme", "zed@x.io", "member")); }, NotFound,
       "no user \"zed@x.io\" (add one with: users add EMAIL)"},
      {"member twice",
       [&](Accounts& a) { return status(a.addMember(op, "acme", "mem@x.io", "admin")); }, Conflict,
       "mem@x.io is already a member of \"acme\" (change the role with: members role)"},
      {"role of a stranger",
       [&](Accounts& a) { return status(a.setRole(op, "acme", "out@x.io", "admin")); }, NotFound,
       "out@x.io is not a member of \"acme\""},
      {"remove a stranger",
       [&](Accounts& a) { return status(a.removeMember(op, "acme", "out@x.io")); }, NotFound,
       "out@x.io is not a member of \"acme\""},
      {"members of a team not theirs",
       [&](Accounts& a) { return status(a.listMembers(as("out@x.io"), "acme")); }, Forbidden,
       "out@x.io is not a member of team \"acme\""},
      {"invite for no time",
       [&](Accounts& a) {
         return status(a.createInvite(op, "acme", "viewer", {}, std::chrono::milliseconds(0)));
       },
       Invalid, "an invitation must be valid for some time"},
      {"invite a bad email",
       [&](Accounts& a) {
         return status(a.createInvite(op, "acme", "viewer", "bad", std::chrono::hours(1)));
       },
       Invalid, "not an email address: \"bad\""},
      {"member lists invites",
       [&](Accounts& a) { return status(a.listInvites(as("mem@x.io"), "acme")); }, Forbidden,
       "a team member may not do this"},
      {"not a token",
       [&](Accounts& a) { return status(a.acceptInvite("inv-tollgate-short", "x@x.io")); }, Invalid,
       "not an invitation token"},
      {"unknown token",
       [&](Accounts& a) {
         return status(a.acceptInvite("inv-tollgate-" + std::string(32, 'a'), "x@x.io"));
       },
       NotFound, "unknown invitation"},
      {"revoked token",
       [&](Accounts& a) { return status(a.acceptInvite(revoked.token, "x@x.io")); }, Conflict,
       "this invitation was revoked"},
      {"unknown invitation id", [&](Accounts& a) { return status(a.revokeInvite(op, "nope")); },
       NotFound, "no invitation \"nope\""},
      {"bad key name", [&](Accounts& a) { return status(a.createKey(op, "acme", "", {})); },
       Invalid, "a key name must not be empty"},
      {"key for a stranger",
       [&](Accounts& a) { return status(a.createKey(op, "acme", "x", "out@x.io")); }, NotFound,
       "out@x.io is not a member of \"acme\""},
      {"duplicate key",
       [&](Accounts& a) {
         value(a.createKey(op, "acme", "twice", {}));
         return status(a.createKey(op, "acme", "twice", {}));
       },
       Conflict, "team \"acme\" already has an active key named \"twice\""},
      {"member lists all keys",
       [&](Accounts& a) { return status(a.listKeys(as("mem@x.io"), std::nullopt)); }, Invalid,
       "name the team"},
      {"not a key", [&](Accounts& a) { return status(a.revokeKey(op, "sk-tollgate-bad")); },
       Invalid, "not an API key"},
      {"not a public id", [&](Accounts& a) { return status(a.revokeKey(op, "x;DROP")); }, Invalid,
       "not a key's public id: \"x;DROP\""},
      {"unknown key", [&](Accounts& a) { return status(a.revokeKey(op, "AAAAAAAAAAAA")); },
       NotFound, "no key with public id AAAAAAAAAAAA"},
      {"revoked key", [&](Accounts& a) { return status(a.revokeKey(op, key.key.public_id)); },
       Conflict, "key " + key.key.public_id + " is already revoked"},
  };
  for (const RefusalCase& c : cases) {
    EXPECT_TRUE(refused(c.call(*acc_), c.kind, c.message)) << c.what;
  }
}

TEST_F(AccountsTest, ChangesMoveTheSequenceThatGatewaysFollow) {
  const std::int64_t before = store_->changeSeq();
  const CreatedKey k = value(acc_->createKey(op_, "acme", "k", {}));
  EXPECT_GT(k.propagation.seq, before);
  EXPECT_GT(value(acc_->revokeKey(op_, k.key.public_id)).seq, k.propagation.seq);
  EXPECT_GT(value(acc_->setTeamActive(op_, "acme", false)).seq, k.propagation.seq + 1);
  // A gateway alive and behind is reported once the (here zero) wait ends.
  store_->registerGateway({"gw-1", "host", 42, 0, 0});
  const Propagation p = value(acc_->setTeamActive(op_, "acme", true));
  ASSERT_EQ(p.lagging.size(), 1u);
  EXPECT_EQ(p.lagging[0].id, "gw-1");
  EXPECT_EQ(acc_->laggingGateways(p.seq).size(), 1u);
  store_->heartbeat("gw-1", p.seq);
  EXPECT_TRUE(acc_->laggingGateways(p.seq).empty());
}

TEST_F(AccountsTest, BootstrapMakesTheDefaultTeamAndKeyOnceOnANewStore) {
  EXPECT_FALSE(acc_->bootstrap());  // The store has a team.
  ::tollgate::test::TempDir fresh{"tollgate-accounts-bootstrap"};
  store::Store s(store::connect({store::Engine::Sqlite, fresh.file("t.db")}));
  store::migrate(s.connection());
  Accounts a(s, "secret", PropagationPolicy{std::chrono::milliseconds(0)});
  const std::optional<CreatedKey> made = a.bootstrap();
  ASSERT_TRUE(made);
  EXPECT_EQ(made->key.team, "default");
  EXPECT_EQ(made->key.name, "default");
  EXPECT_FALSE(made->key.created_by);
  EXPECT_EQ(auth::parseKey(made->full).shape, auth::KeyShape::Ok);
  EXPECT_FALSE(a.bootstrap());
}

}  // namespace
}  // namespace tollgate::accounts
