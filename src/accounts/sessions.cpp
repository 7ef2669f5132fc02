#include "accounts/sessions.hpp"

#include <algorithm>

#include "auth/api_key.hpp"
#include "core/email.hpp"
#include "core/text.hpp"

namespace tollgate::accounts {
namespace {

constexpr std::size_t kSessionIdLength = 43;  // base62: about 256 bits
constexpr std::string_view kLinkPrefix = "ll-tollgate-";
constexpr std::size_t kLinkSecretLength = 32;
/// A session's last use is written at most this often (one write a minute, not per request).
constexpr std::int64_t kTouchEveryMs = 60'000;

}  // namespace

bool isSessionId(std::string_view id) {
  return id.size() == kSessionIdLength && text::isBase62(id);
}

Sessions::Sessions(store::Store& s, std::string server_secret, SessionPolicy policy)
    : store_(s), server_secret_(std::move(server_secret)), policy_(policy) {}

std::string Sessions::hashOf(std::string_view domain, std::string_view secret) const {
  // A domain of its own per kind of secret: a session's hash is never a valid link's.
  return auth::toHex(
      auth::keyedHash(server_secret_, std::string(domain) + ":" + std::string(secret)));
}

NewSession Sessions::open(const store::User& user, std::string_view method,
                          const std::string& source) {
  store::Transaction tx(store_.connection());
  NewSession s = openIn(user, method, source);
  tx.commit();
  return s;
}

NewSession Sessions::openIn(const store::User& user, std::string_view method,
                            const std::string& source) {
  const std::int64_t now = store::nowMs();
  // Each sign-in sweeps what has ended (a session nobody used again is otherwise kept).
  store_.forgetEndedSignIns(now - policy_.idle.count(), now);
  NewSession s{auth::randomBase62(kSessionIdLength), user, now + policy_.lifetime.count()};
  store_.createSession(hashOf("session", s.id), {user.id, now, now, s.expires_at}, source);
  store_.appendAudit(
      {.actor = user.email, .action = "signin", .target = std::string(method), .source = source});
  return s;
}

Outcome<SignedIn> Sessions::resolve(std::string_view id) {
  const Refusal gone{RefusalKind::NotFound, "not signed in, or the session has ended"};
  if (!isSessionId(id)) {
    return gone;
  }
  const std::string hash = hashOf("session", id);
  const auto s = store_.findSession(hash);
  if (!s) {
    return gone;
  }
  const std::int64_t now = store::nowMs();
  if (now >= s->expires_at || now - s->seen_at > policy_.idle.count()) {
    return gone;  // Deleted by the next sign-in's sweep: an ended session writes nothing.
  }
  auto user = store_.findUserById(s->user_id);
  if (!user) {
    return gone;
  }
  if (now - s->seen_at >= std::min<std::int64_t>(kTouchEveryMs, policy_.idle.count() / 4)) {
    store_.touchSession(hash, now);
  }
  return SignedIn{*std::move(user), s->expires_at};
}

void Sessions::close(std::string_view id) {
  if (isSessionId(id)) {
    store_.deleteSession(hashOf("session", id));
  }
}

std::string Sessions::csrfToken(std::string_view id) const { return hashOf("csrf", id); }

bool Sessions::csrfMatches(std::string_view id, std::string_view token) const {
  auth::Digest expected{};
  auth::Digest given{};
  return auth::fromHex(csrfToken(id), expected) && auth::fromHex(token, given) &&
         auth::constantTimeEqual(expected, given);
}

Outcome<std::string> Sessions::createLoginLink(const std::string& email) {
  const Outcome<std::string> e = checkEmail(email);
  if (!e) {
    return e.error();
  }
  const std::string secret = auth::randomBase62(kLinkSecretLength);
  store::Transaction tx(store_.connection());
  auto user = store_.findUser(*e);
  if (!user) {
    user = store_.addUser(*e, "");
  }
  store_.createLoginLink(hashOf("link", secret), user->id,
                         store::nowMs() + std::chrono::milliseconds(kLoginLinkLifetime).count());
  store_.appendAudit(
      {.actor = "operator", .action = "signin.link_created", .target = *e, .source = "cli"});
  tx.commit();
  return std::string(kLinkPrefix) + secret;
}

Outcome<NewSession> Sessions::redeemLoginLink(std::string_view token, const std::string& source) {
  const Refusal refused{RefusalKind::Invalid,
                        "this sign-in link is unknown, used or expired: ask for a new one"};
  if (!token.starts_with(kLinkPrefix) || token.size() != kLinkPrefix.size() + kLinkSecretLength ||
      !text::isBase62(token.substr(kLinkPrefix.size()))) {
    return refused;
  }
  // A read first: a link that is not live takes no write lock and writes nothing.
  const std::string hash = hashOf("link", token.substr(kLinkPrefix.size()));
  const std::int64_t now = store::nowMs();
  if (!store_.liveLoginLink(hash, now)) {
    return refused;
  }
  store::Transaction tx(store_.connection());
  // Used once: of two redeeming it at once, the conditional update lets one through.
  const auto user_id = store_.useLoginLink(hash, now);
  const auto user = user_id ? store_.findUserById(*user_id) : std::nullopt;
  if (!user) {
    return refused;  // Rolled back: nothing was written.
  }
  NewSession s = openIn(*user, "link", source);
  tx.commit();
  return s;
}

Outcome<NewSession> Sessions::openWithProvider(const ProviderIdentity& who, bool allow_signup,
                                               const std::string& source) {
  const Outcome<std::string> e = checkEmail(who.email);
  if (!e) {
    recordFailure(who.email, "identity provider: an email that is not an address", source);
    return e.error();
  }
  if (email::nonRoutable(*e)) {
    recordFailure(*e, "identity provider: an address at a domain no provider can vouch for",
                  source);
    return Refusal{RefusalKind::Invalid,
                   "an address at this domain cannot sign in with an identity provider"};
  }
  store::Transaction tx(store_.connection());
  std::optional<store::User> user;
  // The person is who the provider says by its (issuer, subject), whatever the email says now.
  if (const auto bound = store_.userOfIdentity(who.issuer, who.subject)) {
    user = store_.findUserById(*bound);
  } else if ((user = store_.findUser(*e))) {
    if (store_.identityAt(user->id, who.issuer)) {
      recordFailure(*e, "identity provider: the address is bound to another subject", source);
      tx.commit();
      return Refusal{RefusalKind::Conflict,
                     "this address is bound to another account at the identity provider: an "
                     "operator may unbind it with tollgate admin users unlink " +
                         *e};
    }
    // The first binding trusts the provider's verified email, once.
    store_.bindIdentity(who.issuer, who.subject, user->id);
    store_.appendAudit(
        {.actor = *e, .action = "user.identity_linked", .target = who.issuer, .source = source});
  } else if (allow_signup) {
    user = store_.addUser(*e, "");
    store_.bindIdentity(who.issuer, who.subject, user->id);
    store_.appendAudit({.actor = *e, .action = "user.signed_up", .target = *e, .source = source});
  }
  if (!user) {
    recordFailure(*e, "identity provider: not a user, and sign-up is off", source);
    tx.commit();
    return Refusal{RefusalKind::NotFound,
                   "no user has this email address: ask for an invitation or to be added"};
  }
  NewSession s = openIn(*user, "oidc", source);
  tx.commit();
  return s;
}

void Sessions::recordFailures(const SignInFailures& f) {
  store_.appendAudit({.actor = "anonymous",
                      .action = "signin.failed",
                      .target = describe(f),
                      .source = "gateway"});
}

void Sessions::recordFailure(std::string_view who, std::string_view reason,
                             const std::string& source) {
  store_.appendAudit({.actor = who.empty() ? std::string("unknown") : std::string(who),
                      .action = "signin.failed",
                      .target = std::string(reason),
                      .source = source});
}

}  // namespace tollgate::accounts
