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
  const auto actions = auditActions();
  EXPECT_EQ(std::count(actions.begin(), actions.end(), "signin"), 1);
  EXPECT_EQ(std::count(actions.begin(), actions.end(), "signin.failed"), 2);
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
  EXPECT_EQ(rows("console_sessions"), 0) << "an ended session is removed";

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

TEST_F(SessionsTest, AnOidcLoginIsStoredByTheHashOfItsStateAndServesOnce) {
  Sessions s = sessions();
  const std::string state = "a-state-of-forty-three-characters-xxxxxxxxx";
  const store::OidcLogin login{"the-nonce", "the-verifier", "/console/keys",
                               store::nowMs() + 600'000};
  s.beginOidcLogin(state, login);
  EXPECT_EQ(rows("oidc_logins"), 1);
  EXPECT_TRUE(store_->connection()
                  .query("SELECT 1 FROM oidc_logins WHERE state_hash = $1", {state})
                  .empty());
  EXPECT_FALSE(s.takeOidcLogin("another state"));
  const auto taken = s.takeOidcLogin(state);
  ASSERT_TRUE(taken);
  EXPECT_EQ(taken->nonce, "the-nonce");
  EXPECT_EQ(taken->code_verifier, "the-verifier");
  EXPECT_EQ(taken->return_to, "/console/keys");
  EXPECT_FALSE(s.takeOidcLogin(state)) << "a replayed state finds nothing";
}

TEST_F(SessionsTest, StartingAnOidcLoginForgetsTheExpiredOnes) {
  Sessions s = sessions();
  s.beginOidcLogin("old", {"n", "v", "/console/", store::nowMs() - 1});
  s.beginOidcLogin("new", {"n", "v", "/console/", store::nowMs() + 600'000});
  EXPECT_EQ(rows("oidc_logins"), 1);
  EXPECT_TRUE(s.takeOidcLogin("new"));
}

TEST_F(SessionsTest, TheProviderSignsInUsersAndNewcomersOnlyWithSignUp) {
  Sessions s = sessions();
  store_->addUser("ann@acme.test", "");
  const NewSession ann = value(s.openWithProvider("ann@acme.test", false, "10.0.0.1"));
  EXPECT_EQ(value(s.resolve(ann.id)).user.email, "ann@acme.test");
  EXPECT_TRUE(
      refused(s.openWithProvider("bob@acme.test", false, "10.0.0.1"), RefusalKind::NotFound));
  EXPECT_FALSE(store_->findUser("bob@acme.test"));
  const NewSession bob = value(s.openWithProvider("bob@acme.test", true, "10.0.0.1"));
  EXPECT_EQ(bob.user.email, "bob@acme.test");
  EXPECT_TRUE(store_->findUser("bob@acme.test"));
  std::vector<std::string> actions = auditActions();
  std::sort(actions.begin(), actions.end());
  EXPECT_EQ(actions,
            (std::vector<std::string>{"signin", "signin", "signin.failed", "user.signed_up"}));
}

}  // namespace
}  // namespace tollgate::accounts
