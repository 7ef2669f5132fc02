// API-key authentication on the request path: the Authorization header → a caller (key public
// id, team), or the 401/403 that says why not. Reads the in-memory KeyTable only.
#pragma once

#include <string>

#include "auth/key_table.hpp"
#include "http/authenticator.hpp"

namespace tollgate::auth {

class KeyAuthenticator final : public http::Authenticator {
 public:
  KeyAuthenticator(const KeyDirectory& keys, std::string_view server_secret)
      : keys_(keys), hash_(server_secret) {}

  std::optional<Error> authenticate(std::string_view authorization,
                                    exchange::Caller& caller) const override;

 private:
  const KeyDirectory& keys_;
  KeyedHasher hash_;
};

}  // namespace tollgate::auth
