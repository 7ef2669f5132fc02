#include "console/oidc_client.hpp"

#include "console/oidc_flow.hpp"
#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::console {
namespace {

OidcProblem unavailable(std::string reason) { return {true, std::move(reason)}; }
OidcProblem refused(std::string reason) { return {false, std::move(reason)}; }

std::int64_t unixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The `error` code of an OAuth error answer, printable and short, for the audit trail.
std::string oauthError(const std::string& body) {
  rapidjson::Document doc;
  if (json::parse(doc, body) || !doc.IsObject()) {
    return "";
  }
  const auto e = json::stringMember(doc, "error");
  return e ? text::printable(*e, 64) : "";
}

}  // namespace

OidcClient::Awaitable<Result<std::string, OidcProblem>> OidcClient::fetch(std::string_view url,
                                                                          std::size_t max_bytes) {
  const auto target = splitUrl(url);
  if (!target) {
    co_return unavailable("not a URL the gateway can call: " + text::printable(url, 120));
  }
  http::OutboundRequest req;
  req.base = target->base;
  req.path = target->path;
  req.headers.emplace_back("Accept", "application/json");
  req.timeout = kTimeout;
  req.max_response_bytes = max_bytes;
  auto got = co_await outbound_.send(req);
  if (!got) {
    co_return unavailable("GET " + text::printable(url, 120) + ": " + got.error().message);
  }
  if (got->status != 200) {
    co_return unavailable("GET " + text::printable(url, 120) + " answered " +
                          std::to_string(got->status));
  }
  co_return std::move(got->body);
}

OidcClient::Awaitable<Result<auth::OidcDiscovery, OidcProblem>> OidcClient::discovery() {
  if (discovery_ && Clock::now() - discovered_at_ < kCacheFor) {
    co_return *discovery_;
  }
  const std::string url = discoveryUrl(config_.issuer);
  auto body = co_await fetch(url, auth::kMaxDiscoveryBytes);
  if (!body) {
    if (discovery_) {
      co_return *discovery_;  // Stale, but the provider's endpoints rarely move.
    }
    co_return std::move(body).error();
  }
  auto parsed = auth::parseDiscovery(*body, config_.issuer);
  if (!parsed) {
    co_return unavailable("the discovery document is refused: " + parsed.error());
  }
  discovery_ = std::move(parsed).value();
  discovered_at_ = Clock::now();
  co_return *discovery_;
}

OidcClient::Awaitable<Result<std::string, OidcProblem>> OidcClient::redeem(
    const auth::OidcDiscovery& d, std::string_view code, std::string_view redirect_uri,
    std::string_view code_verifier) {
  const auto target = splitUrl(d.token_endpoint);
  if (!target) {
    co_return unavailable("the token endpoint is not a URL the gateway can call");
  }
  TokenRequest t = tokenRequest(config_, clientAuthFor(d), code, redirect_uri, code_verifier);
  http::OutboundRequest req;
  req.base = target->base;
  req.method = "POST";
  req.path = target->path;
  req.headers = std::move(t.headers);
  req.content_type = "application/x-www-form-urlencoded";
  req.body = std::move(t.body);
  req.timeout = kTimeout;
  req.max_response_bytes = kMaxTokenResponseBytes;
  auto got = co_await outbound_.send(req);
  if (!got) {
    co_return unavailable("token endpoint: " + got.error().message);
  }
  if (got->status >= 500) {
    co_return unavailable("token endpoint answered " + std::to_string(got->status));
  }
  if (got->status != 200) {
    const std::string error = oauthError(got->body);
    co_return refused("token endpoint answered " + std::to_string(got->status) +
                      (error.empty() ? "" : " " + error));
  }
  rapidjson::Document doc;
  if (json::parse(doc, got->body, json::Keys::Unique) || !doc.IsObject()) {
    co_return refused("token endpoint: the answer is not a JSON object");
  }
  const auto id_token = json::stringMember(doc, "id_token");
  if (!id_token || id_token->empty()) {
    co_return refused("token endpoint: the answer has no id_token");
  }
  co_return std::string(*id_token);
}

OidcClient::Awaitable<Result<Ok, OidcProblem>> OidcClient::fetchKeys(std::string_view jwks_uri) {
  auto body = co_await fetch(jwks_uri, auth::kMaxJwksBytes);
  if (!body) {
    co_return std::move(body).error();
  }
  auto parsed = auth::parseJwks(*body);
  if (!parsed) {
    co_return unavailable("the JWKS is refused: " + parsed.error());
  }
  jwks_ = std::move(parsed).value();
  keys_fetched_at_ = Clock::now();
  co_return Ok{};
}

OidcClient::Awaitable<Result<auth::IdClaims, OidcProblem>> OidcClient::verify(
    const auth::OidcDiscovery& d, std::string_view id_token, std::string_view nonce) {
  if (!jwks_ || Clock::now() - keys_fetched_at_ >= kCacheFor) {
    auto fetched = co_await fetchKeys(d.jwks_uri);
    if (!fetched && !jwks_) {
      co_return std::move(fetched).error();
    }
  }
  const auth::IdTokenExpect expect{config_.issuer, config_.client_id, std::string(nonce),
                                   unixSeconds()};
  auto claims = auth::verifyIdToken(id_token, *jwks_, expect);
  const bool miss = !claims && claims.error() == auth::IdTokenFailure::UnknownKey;
  if (miss && (!last_miss_refetch_ || Clock::now() - *last_miss_refetch_ >= kMissRefetchEvery)) {
    // A key the cached set lacks: the provider may have rotated its keys. Once.
    last_miss_refetch_ = Clock::now();
    auto fetched = co_await fetchKeys(d.jwks_uri);
    if (!fetched) {
      co_return std::move(fetched).error();
    }
    claims = auth::verifyIdToken(id_token, *jwks_, expect);
  }
  if (!claims) {
    const auth::IdTokenFailure why = claims.error();
    co_return OidcProblem{false, "ID token: " + std::string(auth::failureName(why)), why};
  }
  co_return std::move(claims).value();
}

std::shared_ptr<OidcClient> OidcClients::clientFor(const config::Console& console) {
  if (!console.oidc) {
    return nullptr;
  }
  const config::Oidc& o = *console.oidc;
  const auto same = [&o](const config::Oidc& c) {
    return c.issuer == o.issuer && c.client_id == o.client_id && c.client_secret == o.client_secret;
  };
  if (current_ == nullptr || !same(current_->config())) {
    current_ = std::make_shared<OidcClient>(o, outbound_);
  }
  return current_;
}

}  // namespace tollgate::console
