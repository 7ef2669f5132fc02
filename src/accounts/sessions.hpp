// Console sign-in: server-side sessions and one-time sign-in links. A session's id (the cookie's
// value) and a link's token are random secrets of which only keyed hashes are stored, so every
// gateway on the store serves the same sessions, and ending one (logout, expiry) ends it on all
// of them at once. A session ends when idle for too long or at its absolute lifetime; its CSRF
// token is derived from its id and never stored. Every call blocks on the store (AccountService
// runs them off the event loop); sign-ins go to the audit log, and so do failed ones: one row
// each for a known person, a summary a minute for anonymous ones (SignInGuard).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accounts/accounts.hpp"
#include "accounts/refusal.hpp"
#include "accounts/sign_in_guard.hpp"
#include "store/store.hpp"

namespace tollgate::accounts {

/// A session just opened: its id (the cookie's value, to send once) and when it ends at most.
struct NewSession {
  std::string id;
  store::User user;
  std::int64_t expires_at = 0;
};

/// The user a live session belongs to.
struct SignedIn {
  store::User user;
  std::int64_t expires_at = 0;
};

/// Who an identity provider vouched for.
struct ProviderIdentity {
  std::string issuer;
  std::string subject;
  std::string email;  ///< Verified by the provider.
};

/// How long a one-time sign-in link stays usable.
inline constexpr std::chrono::minutes kLoginLinkLifetime{15};

class Sessions {
 public:
  Sessions(store::Store& s, std::string server_secret, SessionPolicy policy);

  /// Opens a new session for `user`, signed in by `method` ("link", "oidc") from `source`.
  NewSession open(const store::User& user, std::string_view method, const std::string& source);
  /// The user of the session `id`, while it is live (refused NotFound otherwise: unknown,
  /// idle too long or past its lifetime; nothing is written for those).
  Outcome<SignedIn> resolve(std::string_view id);
  /// Ends the session `id` (nothing if there is none).
  void close(std::string_view id);
  /// The CSRF token of session `id`: what state-changing calls must send back.
  std::string csrfToken(std::string_view id) const;
  /// True when `token` is session `id`'s CSRF token (compared in constant time).
  bool csrfMatches(std::string_view id, std::string_view token) const;

  /// A single-use sign-in token for `email` (the user is added if new), valid 15 minutes.
  Outcome<std::string> createLoginLink(const std::string& email);
  /// Uses the sign-in token once and opens a session for its user. A token that is not a live
  /// link is refused after a read alone: nothing is written (the caller counts the failure).
  Outcome<NewSession> redeemLoginLink(std::string_view token, const std::string& source);

  /// Opens a session for the person the identity provider vouched for: the user bound to its
  /// (issuer, subject); else the user with its verified email, bound to it then (audited
  /// user.identity_linked), unless bound to another subject at that issuer (refused Conflict);
  /// else a new user when `allow_signup` (refused NotFound otherwise). An address at a
  /// non-routable domain (email::nonRoutable) is refused Invalid. Refusals are audited.
  Outcome<NewSession> openWithProvider(const ProviderIdentity& who, bool allow_signup,
                                       const std::string& source);

  /// Records the anonymous failures of a while (SignInGuard's summary) as one audit row.
  void recordFailures(const SignInFailures& f);
  /// Records a refused sign-in of a known person (its reason, never a secret) in the audit log.
  void recordFailure(std::string_view who, std::string_view reason, const std::string& source);

 private:
  std::string hashOf(std::string_view domain, std::string_view secret) const;
  /// open(), in the caller's transaction.
  NewSession openIn(const store::User& user, std::string_view method, const std::string& source);

  store::Store& store_;
  std::string server_secret_;
  SessionPolicy policy_;
};

/// Whether `id` has the shape of a session id (so that the store is never asked for others).
bool isSessionId(std::string_view id);

}  // namespace tollgate::accounts
