// API-key authentication on the request path: the Authorization header → a caller (key public
// id, team, the models the key allows), or the 401/403 that says why not (a key past its expiry
// included); 503 gateway_fenced while the gateway's lease has run out (its KeyTable may be behind
// a change that has returned). Reads memory only.
//
// Each thread remembers the last secrets that verified (eight, one per slot chosen by the public
// id), so that a client's next request with its key compares 32 bytes instead of computing the
// keyed hash again (two SHA-256 compressions behind OpenSSL's dispatch, about 5k instructions).
// A slot is taken only for the same public id and the whole secret equal in constant time; a
// public id that does not exist, or a wrong secret, is always hashed, so timing still tells
// nothing of which public ids exist. The slots hold secrets as presented (as the request buffers
// do) and are wiped when the thread ends.
#pragma once

#include <cstdint>
#include <string>

#include "auth/key_table.hpp"
#include "core/lease.hpp"
#include "http/authenticator.hpp"

namespace tollgate::auth {

class KeyAuthenticator final : public http::Authenticator {
 public:
  /// `lease`: the gateway's lease on serving; nullptr: never fenced.
  KeyAuthenticator(const KeyDirectory& keys, std::string_view server_secret,
                   const Lease* lease = nullptr);

  std::optional<Error> authenticate(std::string_view authorization,
                                    exchange::Caller& caller) const override;

 private:
  const KeyDirectory& keys_;
  KeyedHasher hash_;
  const Lease* lease_;
  /// Tells this authenticator's remembered secrets from another's (another server secret).
  const std::uint64_t id_;
};

}  // namespace tollgate::auth
