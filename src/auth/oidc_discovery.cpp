#include "auth/oidc_discovery.hpp"

#include <algorithm>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <optional>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::auth {
namespace {

namespace urls = boost::urls;

/// How a URL reached us over the network: https, http to this machine, or neither.
enum class Transport { Https, LoopbackHttp, Other };

bool isLoopback(const urls::url_view& u) {
  switch (u.host_type()) {
    case urls::host_type::ipv4:
      return u.host_ipv4_address().is_loopback();
    case urls::host_type::ipv6:
      return u.host_ipv6_address().is_loopback();
    case urls::host_type::name:
      return text::equalsIgnoreCase(u.encoded_host(), "localhost");
    default:
      return false;
  }
}

/// `text` as an absolute http(s) URL with a host and neither credentials nor a fragment.
std::optional<urls::url_view> httpUrl(std::string_view text) {
  const auto parsed = urls::parse_absolute_uri(text);
  if (!parsed ||
      (parsed->scheme_id() != urls::scheme::https && parsed->scheme_id() != urls::scheme::http)) {
    return std::nullopt;
  }
  const urls::url_view u = *parsed;
  if (!u.has_authority() || u.encoded_host().empty() || u.has_userinfo() || u.has_fragment()) {
    return std::nullopt;
  }
  return u;
}

Transport transportOf(const urls::url_view& u) {
  if (u.scheme_id() == urls::scheme::https) {
    return Transport::Https;
  }
  return isLoopback(u) ? Transport::LoopbackHttp : Transport::Other;
}

/// The string array `name`, the default when it is absent, or nullopt when it is not an array of
/// strings.
std::optional<std::vector<std::string>> stringList(const rapidjson::Value& doc,
                                                   std::string_view name,
                                                   std::vector<std::string> absent) {
  const rapidjson::Value* v = json::member(doc, name);
  if (v == nullptr) {
    return absent;
  }
  if (!v->IsArray()) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const rapidjson::Value& item : v->GetArray()) {
    if (!item.IsString()) {
      return std::nullopt;
    }
    out.emplace_back(json::view(item));
  }
  return out;
}

std::string quoted(std::string_view s) { return "\"" + text::printable(s, 120) + "\""; }

}  // namespace

Result<OidcDiscovery, std::string> parseDiscovery(std::string_view json, std::string_view issuer) {
  if (json.size() > kMaxDiscoveryBytes) {
    return "the discovery document is larger than " + std::to_string(kMaxDiscoveryBytes / 1024) +
           " KiB";
  }
  const auto issuer_url = httpUrl(issuer);
  const Transport issuer_transport = issuer_url ? transportOf(*issuer_url) : Transport::Other;
  if (issuer_transport == Transport::Other || issuer_url->has_query()) {
    return "the issuer " + quoted(issuer) +
           " is not an https URL (or http on a loopback host) without query or fragment";
  }
  rapidjson::Document doc;
  if (const auto failure = json::parse(doc, std::string(json), json::Keys::Unique)) {
    return "the discovery document is not JSON: " + failure->reason +
           (failure->path.empty() ? "" : " at " + failure->path);
  }
  if (!doc.IsObject()) {
    return std::string("the discovery document is not a JSON object");
  }
  OidcDiscovery d;
  const auto their_issuer = json::stringMember(doc, "issuer");
  if (their_issuer != issuer) {
    return "the discovery document's issuer " + quoted(their_issuer.value_or("")) +
           " is not the configured issuer " + quoted(issuer);
  }
  d.issuer = issuer;
  for (auto [name, field] :
       {std::pair{"authorization_endpoint", &d.authorization_endpoint},
        std::pair{"token_endpoint", &d.token_endpoint}, std::pair{"jwks_uri", &d.jwks_uri}}) {
    const auto url = json::stringMember(doc, name);
    const auto u = url ? httpUrl(*url) : std::nullopt;
    const Transport transport = u ? transportOf(*u) : Transport::Other;
    const bool allowed =
        transport == Transport::Https ||
        (transport == Transport::LoopbackHttp && issuer_transport == Transport::LoopbackHttp);
    if (!allowed) {
      return std::string(name) + " " + quoted(url.value_or("")) +
             " is not an https URL (http only to a loopback host, for a loopback issuer)";
    }
    *field = *url;
  }
  const auto auth_methods =
      stringList(doc, "token_endpoint_auth_methods_supported", {"client_secret_basic"});
  const auto algs = stringList(doc, "id_token_signing_alg_values_supported", {});
  const auto challenges = stringList(doc, "code_challenge_methods_supported", {});
  if (!auth_methods || !algs || !challenges) {
    return std::string("a *_supported member of the discovery document is not an array of strings");
  }
  if (json::member(doc, "code_challenge_methods_supported") != nullptr &&
      std::find(challenges->begin(), challenges->end(), "S256") == challenges->end()) {
    return std::string("the provider does not support PKCE with S256");
  }
  d.token_endpoint_auth_methods = *auth_methods;
  d.id_token_signing_alg_values = *algs;
  d.code_challenge_methods = *challenges;
  return d;
}

}  // namespace tollgate::auth
