// The check the router asks for on routes that need an API key, before the body is read. The
// auth layer implements it; the HTTP layer only knows its verdict.
#pragma once

#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "exchange/request_context.hpp"

namespace tollgate::http {

class Authenticator {
 public:
  virtual ~Authenticator() = default;
  /// Checks an Authorization header value (empty when absent). On success fills `caller` and
  /// returns nullopt; otherwise the 401 or 403 to answer with.
  virtual std::optional<Error> authenticate(std::string_view authorization,
                                            exchange::Caller& caller) const = 0;
};

}  // namespace tollgate::http
