// Console sessions and one-time sign-in links on a SQLite store: only hashes are stored, a link
// signs in once and not after its 15 minutes, a session ends when idle, at its lifetime and at
// logout, its CSRF token is its own, and sign-ins and refusals are audited.
#include "accounts/sessions.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "accounts/outcomes.hpp"
#include "store/migrations.hpp"
#include "temp_dir.hpp"

namespace tollgate::accounts {
namespace {

using test::refused;
using test::value;

class SessionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ =
        std::make_unique<store::Store>(store::connect({store::Engine::Sqlite, dir_.file("t.db")}));
    store::migrate(store_->connection());
  }
  Sessions sessions(SessionPolicy policy = {}) {
    return Sessions(*store_, "a server secret for the unit tests", policy);
  }
  std::int64_t rows(const std::string& table) {
    return store_->connection().query("SELECT COUNT(*) FROM " + table).front().integer(0);
  }
  std::vector<std::string> auditActions() {
    std::vector<std::string> out;
    for (const store::AuditEntry& e : store_->listAudit({})) {
      out.push_back(e.action);
    }
    return out;
  }

  ::tollgate::test::TempDir dir_{"tollgate-sessions-test"};
  std::unique_ptr<store::Store> store_;
};

TEST_F(SessionsTest, ALinkSignsInOnceAndOnlyItsHashIsStored) {
  Sessions s = sessions();
  const std::string token = value(s.createLoginLink("Ann@Example.com"));
  ASSERT_TRUE(token.starts_with("ll-tollgate-"));
  EXPECT_TRUE(
      store_->connection()
          .query("SELECT token_hash FROM login_links WHERE token_hash LIKE '%' || $1 || '%'",
                 {token.substr(12)})
          .empty());
  const NewSession opened = value(s.redeemLoginLink(token, "10.0.0.1"));
  EXPECT_EQ(opened.user.email, "ann@example.com");
  EXPECT_TRUE(isSessionId(opened.id));
  EXPECT_EQ(value(s.resolve(opened.id)).user.email, "ann@example.com");
  EXPECT_TRUE(refused(s.redeemLoginLink(token, "10.0.0.1"), RefusalKind::Invalid));
  EXPECT_TRUE(refused(s.redeemLoginLink("ll-tollgate-short", "10.0.0.1"), RefusalKind::Invalid));
  EXPECT_TRUE(store_->connection()
                  .query("SELECT 1 FROM console_sessions WHERE id_hash = $1", {opened.id})
                  .empty())
      << "the session id itself is never stored";
  EXPECT_EQ(auditActions(), (std::vector<std::string>{"signin", "signin.link_created"}))
      << "a refused link writes nothing: the caller counts it (SignInGuard)";
}

TEST_F(SessionsTest, ALinkThatIsNotLiveIsRefusedWithoutAWrite) {
  Sessions s = sessions();
  const std::string used = value(s.createLoginLink("ann@example.com"));
  value(s.redeemLoginLink(used, "cli"));
  const std::string expired = value(s.createLoginLink("bob@example.com"));
  store_->connection().query("UPDATE login_links SET expires_at = $1 WHERE used_at IS NULL",
                             {store::nowMs() - 1});
  const auto before = store_->connection().query(
      "SELECT (SELECT COUNT(*) FROM audit_log), (SELECT COUNT(*) FROM console_sessions), "
      "(SELECT COUNT(*) FROM login_links WHERE used_at IS NOT NULL)");
  const std::string unknown = "ll-tollgate-" + std::string(32, 'A');
  for (const std::string& token : {used, expired, unknown}) {
    EXPECT_TRUE(refused(s.redeemLoginLink(token, "10.0.0.9"), RefusalKind::Invalid)) << token;
  }
  const auto after = store_->connection().query(
      "SELECT (SELECT COUNT(*) FROM audit_log), (SELECT COUNT(*) FROM console_sessions), "
      "(SELECT COUNT(*) FROM login_links WHERE used_at IS NOT NULL)");
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(before.front().integer(i), after.front().integer(i)) << "column " << i;
  }
}

TEST_F(SessionsTest, AnExpiredLinkIsRefused) {
  Sessions s = sessions();
  const std::string token = value(s.createLoginLink("bob@example.com"));
  store_->connection().query("UPDATE login_links SET expires_at = $1", {store::nowMs() - 1});
  EXPECT_TRUE(refused(s.redeemLoginLink(token, "cli"), RefusalKind::Invalid));
}

TEST_F(SessionsTest, ASessionEndsWhenIdleAtItsLifetimeAndAtLogout) {
  Sessions idle = sessions({std::chrono::milliseconds(50), std::chrono::hours(1)});
  const NewSession a = value(idle.redeemLoginLink(value(idle.createLoginLink("a@x.io")), "cli"));
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_TRUE(refused(idle.resolve(a.id), RefusalKind::NotFound));
  EXPECT_EQ(rows("console_sessions"), 1)
      << "an ended session is refused without a write (the next sign-in sweeps it)";

  Sessions brief = sessions({std::chrono::hours(1), std::chrono::milliseconds(50)});
  const NewSession b = value(brief.redeemLoginLink(value(brief.createLoginLink("b@x.io")), "cli"));
  EXPECT_TRUE(brief.resolve(b.id));
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  EXPECT_TRUE(refused(brief.resolve(b.id), RefusalKind::NotFound));

  Sessions s = sessions();
  const NewSession c = value(s.redeemLoginLink(value(s.createLoginLink("c@x.io")), "cli"));
  const NewSession d = value(s.redeemLoginLink(value(s.createLoginLink("c@x.io")), "cli"));
  EXPECT_NE(c.id, d.id) << "every sign-in is a new session";
  s.close(c.id);
  EXPECT_TRUE(refused(s.resolve(c.id), RefusalKind::NotFound));
  EXPECT_TRUE(s.resolve(d.id)) << "only the session closed ends";
  EXPECT_TRUE(refused(s.resolve("not-a-session"), RefusalKind::NotFound));
}

TEST_F(SessionsTest, ASignInSweepsSessionsAndLinksThatEnded) {
  Sessions idle = sessions({std::chrono::milliseconds(50), std::chrono::hours(1)});
  value(idle.redeemLoginLink(value(idle.createLoginLink("gone@x.io")), "cli"));
  value(idle.createLoginLink("never@x.io"));
  store_->connection().query("UPDATE login_links SET expires_at = $1 WHERE used_at IS NULL",
                             {store::nowMs() - 1});
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  // Nobody came back to the first session, nor used the second link: the next sign-in removes
  // both, and keeps its own.
  const NewSession next =
      value(idle.redeemLoginLink(value(idle.createLoginLink("next@x.io")), "cli"));
  EXPECT_EQ(rows("console_sessions"), 1);
  EXPECT_EQ(rows("login_links"), 0) << "used and expired links are removed";
  EXPECT_TRUE(idle.resolve(next.id));
}

TEST_F(SessionsTest, AuditRowsArePrunedByAge) {
  const std::int64_t now = store::nowMs();
  store_->appendAudit({.at = now - 10'000, .actor = "old", .action = "x"});
  store_->appendAudit({.at = now, .actor = "new", .action = "x"});
  EXPECT_EQ(store_->pruneAudit(now - 5'000), 1);
  const auto left = store_->listAudit({});
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left.front().actor, "new");
}

TEST_F(SessionsTest, TheCsrfTokenIsTheSessionsOwn) {
  Sessions s = sessions();
  const NewSession a = value(s.redeemLoginLink(value(s.createLoginLink("a@x.io")), "cli"));
  const NewSession b = value(s.redeemLoginLink(value(s.createLoginLink("b@x.io")), "cli"));
  EXPECT_TRUE(s.csrfMatches(a.id, s.csrfToken(a.id)));
  EXPECT_FALSE(s.csrfMatches(a.id, s.csrfToken(b.id)));
  EXPECT_FALSE(s.csrfMatches(a.id, ""));
  EXPECT_FALSE(s.csrfMatches(a.id, "zz"));
  Sessions other(*store_, "another server secret entirely, 32+", {});
  EXPECT_NE(other.csrfToken(a.id), s.csrfToken(a.id));
}

}  // namespace
}  // namespace tollgate::accounts

namespace tollgate::accounts {
namespace {

constexpr std::string_view kIssuer = "https://idp.example.com";

ProviderIdentity vouched(std::string subject, std::string email) {
  return {std::string(kIssuer), std::move(subject), std::move(email)};
}

TEST_F(SessionsTest, TheProviderSignsInUsersAndNewcomersOnlyWithSignUp) {
  Sessions s = sessions();
  store_->addUser("ann@acme.example.com", "");
  const NewSession ann =
      value(s.openWithProvider(vouched("sub-ann", "ann@acme.example.com"), false, "10.0.0.1"));
  EXPECT_EQ(value(s.resolve(ann.id)).user.email, "ann@acme.example.com");
  EXPECT_TRUE(
      refused(s.openWithProvider(vouched("sub-bob", "bob@acme.example.com"), false, "10.0.0.1"),
              RefusalKind::NotFound));
  EXPECT_FALSE(store_->findUser("bob@acme.example.com"));
  const NewSession bob =
      value(s.openWithProvider(vouched("sub-bob", "bob@acme.example.com"), true, "10.0.0.1"));
  EXPECT_EQ(bob.user.email, "bob@acme.example.com");
  EXPECT_EQ(store_->userOfIdentity(std::string(kIssuer), "sub-bob"), bob.user.id);
  std::vector<std::string> actions = auditActions();
  std::sort(actions.begin(), actions.end());
  EXPECT_EQ(actions, (std::vector<std::string>{"signin", "signin", "signin.failed",
                                               "user.identity_linked", "user.signed_up"}));
}

TEST_F(SessionsTest, AUserIsTheSubjectItWasBoundToWhateverTheEmailSays) {
  Sessions s = sessions();
  const store::User owner = store_->addUser("owner@acme.example.com", "");
  value(s.openWithProvider(vouched("sub-owner", "owner@acme.example.com"), false, "10.0.0.1"));
  // Another subject claiming the owner's address (any case) is refused, and not bound.
  EXPECT_TRUE(refused(
      s.openWithProvider(vouched("sub-mallory", "OWNER@ACME.EXAMPLE.COM"), true, "10.0.0.2"),
      RefusalKind::Conflict));
  EXPECT_FALSE(store_->userOfIdentity(std::string(kIssuer), "sub-mallory"));
  // The bound subject signs in as the owner even after its email changed at the provider.
  const NewSession again = value(
      s.openWithProvider(vouched("sub-owner", "renamed@acme.example.com"), false, "10.0.0.1"));
  EXPECT_EQ(again.user.id, owner.id);
  // Unbound (tollgate admin users unlink), the address binds to the next subject, once.
  EXPECT_EQ(store_->unbindIdentities(owner.id), 1);
  EXPECT_EQ(
      value(s.openWithProvider(vouched("sub-new", "owner@acme.example.com"), false, "10.0.0.1"))
          .user.id,
      owner.id);
}

TEST_F(SessionsTest, NonRoutableAddressesNeverSignInThroughAProvider) {
  Sessions s = sessions();
  store_->addUser("owner@localhost", "");
  for (const char* email : {"owner@localhost", "a@intranet", "a@box.local", "a@corp.internal",
                            "a@x.invalid", "a@x.test", "a@x.example", "a@y.localhost"}) {
    EXPECT_TRUE(
        refused(s.openWithProvider(vouched(std::string("sub-") + email, email), true, "10.0.0.1"),
                RefusalKind::Invalid))
        << email;
  }
  EXPECT_EQ(rows("user_identities"), 0);
  EXPECT_EQ(rows("console_sessions"), 0);
}

}  // namespace
}  // namespace tollgate::accounts
