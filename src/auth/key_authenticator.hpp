// API-key authentication on the request path: the Authorization header → a caller (key public
// id, team, the models the key allows), or the 401/403 that says why not (a key past its expiry
// included); 503 gateway_fenced while the gateway's lease has run out (its KeyTable may be behind
// a change that has returned). Reads memory only.
#pragma once

#include <string>

#include "auth/key_table.hpp"
#include "core/lease.hpp"
#include "http/authenticator.hpp"

namespace tollgate::auth {

class KeyAuthenticator final : public http::Authenticator {
 public:
  /// `lease`: the gateway's lease on serving; nullptr: never fenced.
  KeyAuthenticator(const KeyDirectory& keys, std::string_view server_secret,
                   const Lease* lease = nullptr)
      : keys_(keys), hash_(server_secret), lease_(lease) {}

  std::optional<Error> authenticate(std::string_view authorization,
                                    exchange::Caller& caller) const override;

 private:
  const KeyDirectory& keys_;
  KeyedHasher hash_;
  const Lease* lease_;
};

}  // namespace tollgate::auth
