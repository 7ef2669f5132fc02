#include "auth/key_authenticator.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace tollgate::auth {
namespace {

constexpr std::string_view kServerSecret = "unit-test-server-secret-of-32-bytes!";
const std::string kKeyPrefixText(kKeyPrefix);

struct Fixture {
  NewKey good = generateKey();
  NewKey revoked = generateKey();
  NewKey suspended = generateKey();
  NewKey orphan = generateKey();
  KeyDirectory dir;
  KeyAuthenticator auth{dir, std::string(kServerSecret)};

  Fixture() {
    const auto row = [](const NewKey& k, bool revoked, bool active, bool member) {
      return store::KeyGrant{k.public_id, toHex(keyedHash(kServerSecret, k.secret)),
                             "team-id",   "team",
                             revoked,     active,
                             member};
    };
    dir.publish(std::make_shared<KeyTable>(
        std::vector{row(good, false, true, true), row(revoked, true, true, true),
                    row(suspended, false, false, true), row(orphan, false, true, false)},
        nullptr));
  }

  std::string code(std::string_view header) {
    exchange::Caller caller;
    const auto e = auth.authenticate(header, caller);
    return e ? std::string(errorSpec(e->kind).code) : "ok";
  }
};

TEST(KeyAuthenticator, NamesEachCause) {
  Fixture f;
  const std::string bearer = "Bearer ";
  EXPECT_EQ(f.code(bearer + f.good.full), "ok");
  EXPECT_EQ(f.code(""), "missing_api_key");
  EXPECT_EQ(f.code("Bearer"), "invalid_authorization_scheme");
  EXPECT_EQ(f.code("Basic dXNlcjpwYXNz"), "invalid_authorization_scheme");
  EXPECT_EQ(f.code("Token " + f.good.full), "invalid_authorization_scheme");
  EXPECT_EQ(f.code("Bearer "), "malformed_api_key");
  EXPECT_EQ(f.code("Bearer sk-proj-abc"), "malformed_api_key");
  EXPECT_EQ(f.code("Bearer sk-tollgate-abc"), "malformed_api_key");
  EXPECT_EQ(f.code(bearer + f.good.full + "x"), "malformed_api_key");
  EXPECT_EQ(f.code(bearer + "sk-tollgate-" + generateKey().public_id + "-" + f.good.secret),
            "invalid_api_key");
  EXPECT_EQ(f.code(bearer + "sk-tollgate-" + f.good.public_id + "-" + f.revoked.secret),
            "invalid_api_key");
  EXPECT_EQ(f.code(bearer + f.revoked.full), "revoked_api_key");
  EXPECT_EQ(f.code(bearer + f.suspended.full), "team_suspended");
  EXPECT_EQ(f.code(bearer + f.orphan.full), "not_a_member");
}

TEST(KeyAuthenticator, AKeyPastItsExpiryIsRefusedAndTheCallerCarriesItsAllowedModels) {
  const NewKey expired = generateKey();
  const NewKey current = generateKey();
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  constexpr std::int64_t kHour = 3'600'000;
  const auto row = [](const NewKey& k, key_rules::KeyRules rules) {
    store::KeyGrant g{k.public_id, toHex(keyedHash(kServerSecret, k.secret)), "team-id", "team"};
    g.rules = std::move(rules);
    return g;
  };
  KeyDirectory dir;
  dir.publish(std::make_shared<KeyTable>(
      std::vector{row(expired, {now - 1, std::nullopt}),
                  row(current, {now + kHour, std::vector<std::string>{"echo"}})},
      nullptr));
  const KeyAuthenticator auth{dir, std::string(kServerSecret)};
  exchange::Caller caller;
  const auto refused = auth.authenticate("Bearer " + expired.full, caller);
  ASSERT_TRUE(refused);
  EXPECT_EQ(errorSpec(refused->kind).code, "key_expired");
  EXPECT_EQ(refused->status(), 401);
  EXPECT_TRUE(caller.key_public_id.empty());
  ASSERT_FALSE(auth.authenticate("Bearer " + current.full, caller));
  ASSERT_NE(caller.allowed_models, nullptr);
  EXPECT_EQ(*caller.allowed_models, std::vector<std::string>{"echo"});
}

TEST(KeyAuthenticator, AFencedGatewayChecksNoKeyAndTheCallerCarriesTheLeasesEpoch) {
  Fixture f;
  Lease lease(std::chrono::milliseconds(60'000));
  const KeyAuthenticator fenced{f.dir, std::string(kServerSecret), &lease};
  const std::string header = "Bearer " + f.good.full;
  exchange::Caller caller;
  // Never renewed: its table may be behind any change, even for a key it would refuse.
  const auto refused = fenced.authenticate(header, caller);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->kind, ErrorKind::GatewayFenced);
  EXPECT_EQ(refused->status(), 503);
  ASSERT_TRUE(fenced.authenticate("Bearer " + f.revoked.full, caller));
  EXPECT_EQ(fenced.authenticate("Bearer " + f.revoked.full, caller)->kind,
            ErrorKind::GatewayFenced);
  // Within its lease: checked as ever, in the lease's current epoch.
  const auto now = Lease::Clock::now();
  lease.renew(now, now);
  EXPECT_FALSE(fenced.authenticate(header, caller));
  EXPECT_EQ(caller.lease_epoch, lease.epoch());
}

TEST(KeyAuthenticator, SchemeIsCaseInsensitiveAndSpacesMayRepeat) {
  Fixture f;
  EXPECT_EQ(f.code("bearer " + f.good.full), "ok");
  EXPECT_EQ(f.code("BEARER " + f.good.full), "ok");
  EXPECT_EQ(f.code("Bearer    " + f.good.full), "ok");
  EXPECT_EQ(f.code("Bearer\t" + f.good.full), "invalid_authorization_scheme");
}

TEST(KeyAuthenticator, FillsTheCallerAndNeverEchoesTheKey) {
  Fixture f;
  exchange::Caller caller;
  EXPECT_FALSE(f.auth.authenticate("Bearer " + f.good.full, caller));
  EXPECT_EQ(caller.key_public_id, f.good.public_id);
  EXPECT_EQ(caller.team, "team");
  for (const std::string& header :
       {"Bearer " + f.revoked.full, "Bearer " + f.good.full + "x", "Basic " + f.good.full}) {
    exchange::Caller c;
    const auto e = f.auth.authenticate(header, c);
    ASSERT_TRUE(e);
    EXPECT_EQ(errorBody(*e).find(f.good.secret.substr(0, 8)), std::string::npos);
    EXPECT_EQ(errorBody(*e).find(f.revoked.secret.substr(0, 8)), std::string::npos);
    EXPECT_TRUE(c.key_public_id.empty());
  }
}

TEST(KeyAuthenticator, SeesANewTableOnTheNextRequest) {
  Fixture f;
  EXPECT_EQ(f.code("Bearer " + f.good.full), "ok");
  f.dir.publish(std::make_shared<KeyTable>(
      std::vector{store::KeyGrant{f.good.public_id, toHex(keyedHash(kServerSecret, f.good.secret)),
                                  "team-id", "team", true, true, true}},
      f.dir.latest().get()));
  EXPECT_EQ(f.code("Bearer " + f.good.full), "revoked_api_key");
}

// A thread remembers the secrets that verified; a remembered one must never let another secret
// of the same public id in, nor answer for an authenticator under another server secret.
TEST(KeyAuthenticator, ARememberedSecretLetsInThatSecretAlone) {
  Fixture f;
  const std::string bearer = "Bearer " + kKeyPrefixText + f.good.public_id + "-";
  std::string near = f.good.secret;
  near.back() = near.back() == 'a' ? 'b' : 'a';
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(f.code(bearer + f.good.secret), "ok");
    EXPECT_EQ(f.code(bearer + near), "invalid_api_key");
    EXPECT_EQ(f.code(bearer + f.revoked.secret), "invalid_api_key");
    EXPECT_EQ(f.code(bearer + std::string(kSecretLength, 'a')), "invalid_api_key");
  }
}

TEST(KeyAuthenticator, AnotherServerSecretsAuthenticatorHashesForItself) {
  Fixture f;
  ASSERT_EQ(f.code("Bearer " + f.good.full), "ok");  // Remembered under kServerSecret's hash.
  constexpr std::string_view kOther = "another-server-secret-of-32-bytes!!";
  KeyDirectory dir;
  dir.publish(std::make_shared<KeyTable>(
      std::vector{store::KeyGrant{f.good.public_id, toHex(keyedHash(kOther, f.good.secret)),
                                  "team-id", "team", false, true, true}},
      nullptr));
  const KeyAuthenticator other(dir, kOther);
  exchange::Caller caller;
  EXPECT_FALSE(other.authenticate("Bearer " + f.good.full, caller));
  EXPECT_EQ(caller.key_public_id, f.good.public_id);
  // And the first, whose slot the second took, still hashes its own.
  EXPECT_EQ(f.code("Bearer " + f.good.full), "ok");
}

TEST(KeyTable, CarriesLastUsedMarksOverAndHandsThemOutOnce) {
  Fixture f;
  EXPECT_EQ(f.code("Bearer " + f.good.full), "ok");
  const auto first = f.dir.latest();
  const auto used = first->takeUsed();
  ASSERT_EQ(used.size(), 1u);
  EXPECT_EQ(used[0].first, f.good.public_id);
  EXPECT_TRUE(first->takeUsed().empty());
  // A rebuilt table keeps the mark and what was flushed.
  KeyTable next({store::KeyGrant{f.good.public_id, toHex(keyedHash(kServerSecret, f.good.secret)),
                                 "team-id", "team", false, true, true}},
                first.get());
  EXPECT_TRUE(next.takeUsed().empty());
  EXPECT_EQ(next.find(f.good.public_id)->last_used_ms.load(), used[0].second);
}

}  // namespace
}  // namespace tollgate::auth
