// One worker's client of the console's OpenID Connect provider: the discovery document (fetched
// at the first sign-in, not at start, so a provider that is down never stops the gateway; kept
// an hour), the code redeemed at the token endpoint, and the ID token verified against the
// provider's keys, kept an hour and fetched again once when a token names a key they lack (at
// most once a minute for such misses, so forged key ids cannot make the gateway hammer the
// provider). cjose's keys are not thread-safe, so each worker has its own client.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "auth/id_token.hpp"
#include "auth/jwks.hpp"
#include "auth/oidc_discovery.hpp"
#include "config/config.hpp"
#include "core/result.hpp"
#include "http/outbound.hpp"

namespace tollgate::console {

/// Why a step with the provider did not give what a sign-in needs.
struct OidcProblem {
  bool unavailable = false;  ///< The provider could not be reached, or answered garbage.
  std::string reason;        ///< For the log and the audit trail; never a secret.
  std::optional<auth::IdTokenFailure> token_failure = {};  ///< When the ID token was refused.
};

class OidcClient {
 public:
  template <class T>
  using Awaitable = boost::asio::awaitable<T>;
  using Clock = std::chrono::steady_clock;

  /// How long a discovery document and a JWKS are used before they are fetched again.
  static constexpr std::chrono::hours kCacheFor{1};
  /// A JWKS fetched because a token named an unknown key is not fetched again for that reason
  /// sooner than this.
  static constexpr std::chrono::seconds kMissRefetchEvery{60};
  /// Each call to the provider, and the size of its answers.
  static constexpr std::chrono::seconds kTimeout{10};
  static constexpr std::size_t kMaxTokenResponseBytes = 64 * 1024;

  OidcClient(config::Oidc config, http::OutboundHttp& outbound)
      : config_(std::move(config)), outbound_(outbound) {}

  const config::Oidc& config() const { return config_; }

  /// The provider's discovery document: the cached one while it is fresh, else fetched (an
  /// older copy still serves when the provider cannot be reached).
  Awaitable<Result<auth::OidcDiscovery, OidcProblem>> discovery();

  /// Redeems the authorization `code` at the token endpoint; the ID token it answered. The
  /// access token is never looked at.
  Awaitable<Result<std::string, OidcProblem>> redeem(const auth::OidcDiscovery& d,
                                                     std::string_view code,
                                                     std::string_view redirect_uri,
                                                     std::string_view code_verifier);

  /// Verifies `id_token` (auth::verifyIdToken) for this client and `nonce` against the
  /// provider's keys.
  Awaitable<Result<auth::IdClaims, OidcProblem>> verify(const auth::OidcDiscovery& d,
                                                        std::string_view id_token,
                                                        std::string_view nonce);

 private:
  /// GET `url`: the body of a 200 answer of at most `max_bytes`.
  Awaitable<Result<std::string, OidcProblem>> fetch(std::string_view url, std::size_t max_bytes);
  /// Fetches the JWKS at `jwks_uri` into jwks_.
  Awaitable<Result<Ok, OidcProblem>> fetchKeys(std::string_view jwks_uri);

  const config::Oidc config_;
  http::OutboundHttp& outbound_;
  std::optional<auth::OidcDiscovery> discovery_;
  Clock::time_point discovered_at_{};
  std::optional<auth::Jwks> jwks_;
  Clock::time_point keys_fetched_at_{};
  std::optional<Clock::time_point> last_miss_refetch_;
};

/// One worker's client of the identity provider its configuration names, kept while a reload
/// keeps the provider (with the discovery document and keys it fetched) and made afresh for a
/// reload that changes it. A request takes the client of the configuration it pinned.
class OidcClients {
 public:
  explicit OidcClients(http::OutboundHttp& outbound) : outbound_(outbound) {}
  /// The client of `console`'s provider; null when it names none.
  std::shared_ptr<OidcClient> clientFor(const config::Console& console);

 private:
  http::OutboundHttp& outbound_;
  std::shared_ptr<OidcClient> current_;
};

}  // namespace tollgate::console
