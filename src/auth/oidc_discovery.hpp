// An OpenID provider's discovery document (OpenID Connect Discovery 1.0 §3, fetched from
// {issuer}/.well-known/openid-configuration): where to send the person, where to redeem the code
// and where the signing keys are, checked before any of it is used.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace tollgate::auth {

/// A discovery document larger than this is refused.
inline constexpr std::size_t kMaxDiscoveryBytes = 64 * 1024;

struct OidcDiscovery {
  std::string issuer;
  std::string authorization_endpoint;
  std::string token_endpoint;
  std::string jwks_uri;
  /// token_endpoint_auth_methods_supported; {"client_secret_basic"} when absent (§3).
  std::vector<std::string> token_endpoint_auth_methods;
  /// id_token_signing_alg_values_supported; empty when absent.
  std::vector<std::string> id_token_signing_alg_values;
  /// code_challenge_methods_supported (RFC 8414 §2); empty when absent, else it holds "S256".
  std::vector<std::string> code_challenge_methods;
};

/// Reads the discovery document `json` of the provider configured as `issuer`. The document's
/// `issuer` must be byte-equal to `issuer` as configured (§4.3): nothing is stripped or
/// normalised on either side, so a configured trailing slash must be in the document too. The
/// issuer is an https URL, or http on a loopback host (127.0.0.0/8, [::1], localhost), with no
/// query or fragment; `authorization_endpoint`, `token_endpoint` and `jwks_uri` are absolute
/// https URLs without credentials or fragment, or http on a loopback host when the issuer is.
/// The supported-values lists, when present, are arrays of strings, and
/// code_challenge_methods_supported, when present, includes S256. An error, a message for the
/// log, otherwise (also for a document larger than kMaxDiscoveryBytes, not JSON, or repeating a
/// key).
Result<OidcDiscovery, std::string> parseDiscovery(std::string_view json, std::string_view issuer);

}  // namespace tollgate::auth
