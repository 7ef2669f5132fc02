#include "auth/key_authenticator.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>

#include "core/text.hpp"

namespace tollgate::auth {
namespace {

/// Coalesces last-used marks: a key's time moves at most once a second.
constexpr std::int64_t kMarkEveryMs = 1'000;

bool isBearer(std::string_view scheme) {
  // Authentication schemes are case-insensitive (RFC 9110 §11.1).
  return text::equalsIgnoreCase(scheme, "bearer");
}

Error fail(ErrorKind kind, std::string message) { return Error{kind, std::move(message), ""}; }

/// A secret that verified on this thread, and its digest under authenticator `owner`'s server
/// secret (0: empty).
struct Verified {
  std::uint64_t owner = 0;
  std::array<char, kPublicIdLength> public_id{};
  std::array<char, kSecretLength> secret{};
  Digest digest{};
};

struct VerifiedOnThisThread {
  std::array<Verified, 8> slots{};
  VerifiedOnThisThread() = default;
  VerifiedOnThisThread(const VerifiedOnThisThread&) = delete;
  VerifiedOnThisThread& operator=(const VerifiedOnThisThread&) = delete;
  ~VerifiedOnThisThread() { OPENSSL_cleanse(slots.data(), sizeof slots); }

  Verified& slot(std::string_view public_id) {
    std::size_t h = 0;
    for (const char c : public_id) {
      h = h * 31 + static_cast<unsigned char>(c);
    }
    return slots[h % slots.size()];
  }
};

thread_local VerifiedOnThisThread verified;

std::uint64_t newAuthenticatorId() {
  static std::atomic<std::uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

KeyAuthenticator::KeyAuthenticator(const KeyDirectory& keys, std::string_view server_secret,
                                   const Lease* lease)
    : keys_(keys), hash_(server_secret), lease_(lease), id_(newAuthenticatorId()) {}

std::optional<Error> KeyAuthenticator::authenticate(std::string_view authorization,
                                                    exchange::Caller& caller) const {
  // Messages never quote the header: it may hold a real key.
  if (authorization.empty()) {
    return fail(ErrorKind::MissingApiKey,
                "You didn't provide an API key. Send it in the Authorization header: "
                "Authorization: Bearer sk-tollgate-...");
  }
  const std::size_t space = authorization.find(' ');
  if (space == std::string_view::npos || !isBearer(authorization.substr(0, space))) {
    return fail(ErrorKind::InvalidAuthorizationScheme,
                "The Authorization header must use the Bearer scheme: "
                "Authorization: Bearer sk-tollgate-...");
  }
  std::string_view token = authorization.substr(space);
  token.remove_prefix(std::min(token.find_first_not_of(' '), token.size()));  // 1*SP
  const ParsedKey key = parseKey(token);
  if (key.shape == KeyShape::WrongPrefix) {
    return fail(ErrorKind::MalformedApiKey,
                token.empty() ? "The Authorization header has no API key after Bearer."
                              : "Tollgate API keys start with sk-tollgate-; this one does not.");
  }
  if (key.shape == KeyShape::Malformed) {
    return fail(ErrorKind::MalformedApiKey,
                "The API key is malformed: expected sk-tollgate-<public id>-<secret>.");
  }
  // Read before the table: a table published later than this epoch began is at least as new.
  const std::optional<std::uint64_t> epoch =
      lease_ != nullptr ? lease_->trusted(Lease::Clock::now()) : std::nullopt;
  if (lease_ != nullptr && !epoch) {
    return fencedError();  // The table may be behind a revocation that has returned.
  }
  const KeyTable* table = keys_.current();
  const Grant* grant = table != nullptr ? table->find(key.public_id) : nullptr;
  // The same key verified on this thread last: its digest, not the hash again. Else hash whether
  // or not the key exists, so that timing does not tell which public ids do.
  Verified& v = verified.slot(key.public_id);
  const bool remembered =
      v.owner == id_ && std::string_view(v.public_id.data(), v.public_id.size()) == key.public_id &&
      CRYPTO_memcmp(v.secret.data(), key.secret.data(), v.secret.size()) == 0;
  const Digest presented = remembered ? v.digest : hash_(key.secret);
  if (grant == nullptr || !constantTimeEqual(presented, grant->secret_hash)) {
    return fail(ErrorKind::InvalidApiKey, "Incorrect API key provided.");
  }
  if (!remembered) {
    v.owner = id_;
    std::copy(key.public_id.begin(), key.public_id.end(), v.public_id.begin());
    std::copy(key.secret.begin(), key.secret.end(), v.secret.begin());
    v.digest = presented;
  }
  if (grant->revoked) {
    return fail(ErrorKind::RevokedApiKey, "This API key has been revoked.");
  }
  const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  if (grant->expires_at && *grant->expires_at <= now) {
    return fail(ErrorKind::KeyExpired,
                "This API key has expired. Ask a team owner or admin for a new key, or to extend "
                "this one.");
  }
  if (!grant->team_active) {
    return fail(ErrorKind::TeamSuspended,
                "The team of this API key is suspended. Check billing status or ask a team "
                "owner.");
  }
  if (!grant->creator_may_create) {
    return fail(ErrorKind::NotAMember,
                "The user who created this API key is no longer a member of its team, or has a "
                "role that may not create keys. Check team membership and roles.");
  }
  caller.key_public_id = key.public_id;
  caller.team_id = grant->team_id;
  caller.team = grant->team;
  caller.team_allows_dryrun = grant->team_allows_dryrun;
  caller.user_id = grant->creator_id;
  caller.lease_epoch = epoch;
  caller.allowed_models = grant->allowed_models;
  caller.key_limits = grant->limits;
  caller.team_limits = grant->team_limits;
  caller.budget = grant->budget;
  if (now - grant->last_used_ms.load(std::memory_order_relaxed) >= kMarkEveryMs) {
    grant->last_used_ms.store(now, std::memory_order_relaxed);
  }
  return std::nullopt;
}

}  // namespace tollgate::auth
