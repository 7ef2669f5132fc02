#include "auth/oidc_discovery.hpp"

#include <gtest/gtest.h>

namespace tollgate::auth {
namespace {

constexpr std::string_view kIssuer = "https://idp.example";

/// A discovery document for `issuer` with endpoints under `base`, then `extra` members.
std::string document(std::string_view issuer, std::string_view base, std::string_view extra = "") {
  const std::string b(base);
  return R"({"issuer":")" + std::string(issuer) + R"(","authorization_endpoint":")" + b +
         R"(/auth","token_endpoint":")" + b + R"(/token","jwks_uri":")" + b + R"(/jwks")" +
         std::string(extra) + "}";
}

TEST(OidcDiscovery, ReadsTheEndpointsAndDefaults) {
  const auto d = parseDiscovery(document(kIssuer, kIssuer), kIssuer);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d->issuer, kIssuer);
  EXPECT_EQ(d->authorization_endpoint, "https://idp.example/auth");
  EXPECT_EQ(d->token_endpoint, "https://idp.example/token");
  EXPECT_EQ(d->jwks_uri, "https://idp.example/jwks");
  EXPECT_EQ(d->token_endpoint_auth_methods, std::vector<std::string>{"client_secret_basic"});
  EXPECT_TRUE(d->id_token_signing_alg_values.empty());
  EXPECT_TRUE(d->code_challenge_methods.empty());
}

TEST(OidcDiscovery, ReadsTheSupportedLists) {
  const auto d = parseDiscovery(
      document(kIssuer, "https://login.idp.example:8443/oauth2",
               R"(,"token_endpoint_auth_methods_supported":["client_secret_post"],)"
               R"("id_token_signing_alg_values_supported":["RS256","ES256"],)"
               R"("code_challenge_methods_supported":["plain","S256"],"claims_supported":["sub"])"),
      kIssuer);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d->token_endpoint, "https://login.idp.example:8443/oauth2/token");
  EXPECT_EQ(d->token_endpoint_auth_methods, std::vector<std::string>{"client_secret_post"});
  EXPECT_EQ(d->id_token_signing_alg_values, (std::vector<std::string>{"RS256", "ES256"}));
  EXPECT_EQ(d->code_challenge_methods, (std::vector<std::string>{"plain", "S256"}));
}

TEST(OidcDiscovery, AllowsHttpOnlyOnALoopbackIssuer) {
  for (const std::string issuer :
       {"http://127.0.0.1:4000", "http://localhost:4000/realm", "http://[::1]:4000"}) {
    const auto d = parseDiscovery(document(issuer, issuer), issuer);
    EXPECT_TRUE(d.ok()) << issuer << ": " << d.error();
  }
  const std::string loopback = "http://127.0.0.1:4000";
  EXPECT_TRUE(parseDiscovery(document(loopback, "https://idp.example"), loopback).ok());
}

struct Refused {
  const char* name;
  std::string json;
  std::string issuer;
  const char* says;
};

const std::string kHttps(kIssuer);

const Refused kRefused[] = {
    {"issuer_with_a_trailing_slash", document(kHttps + "/", kHttps), kHttps, "issuer"},
    {"issuer_without_the_slash_configured", document(kHttps, kHttps), kHttps + "/", "issuer"},
    {"another_issuer", document("https://evil.example", kHttps), kHttps, "issuer"},
    {"no_issuer", R"({"jwks_uri":"https://idp.example/jwks"})", kHttps, "issuer"},
    {"http_issuer", document("http://idp.example", "http://idp.example"), "http://idp.example",
     "not an https URL"},
    {"issuer_with_a_query", document(kHttps + "?x=1", kHttps), kHttps + "?x=1", "query"},
    {"http_endpoint_of_an_https_issuer", document(kHttps, "http://idp.example"), kHttps,
     "authorization_endpoint"},
    {"http_endpoint_of_a_loopback_issuer_elsewhere",
     document("http://127.0.0.1:4000", "http://idp.example"), "http://127.0.0.1:4000",
     "authorization_endpoint"},
    {"loopback_http_endpoint_of_an_https_issuer", document(kHttps, "http://127.0.0.1:4000"), kHttps,
     "authorization_endpoint"},
    {"relative_endpoint", document(kHttps, ""), kHttps, "authorization_endpoint"},
    {"endpoint_with_credentials", document(kHttps, "https://user:pw@idp.example"), kHttps,
     "authorization_endpoint"},
    {"endpoint_with_a_fragment", document(kHttps, "https://idp.example/x#"), kHttps,
     "authorization_endpoint"},
    {"other_scheme", document(kHttps, "ftp://idp.example"), kHttps, "authorization_endpoint"},
    {"no_jwks_uri",
     R"({"issuer":"https://idp.example","authorization_endpoint":"https://idp.example/a",)"
     R"("token_endpoint":"https://idp.example/t"})",
     kHttps, "jwks_uri"},
    {"pkce_without_s256",
     document(kHttps, kHttps, R"(,"code_challenge_methods_supported":["plain"])"), kHttps, "S256"},
    {"pkce_list_empty", document(kHttps, kHttps, R"(,"code_challenge_methods_supported":[])"),
     kHttps, "S256"},
    {"list_not_of_strings",
     document(kHttps, kHttps, R"(,"id_token_signing_alg_values_supported":"RS256")"), kHttps,
     "array of strings"},
    {"duplicate_member", document(kHttps, kHttps, R"(,"issuer":"https://idp.example")"), kHttps,
     "duplicate key"},
    {"not_an_object", "[]", kHttps, "not a JSON object"},
    {"not_json", "{", kHttps, "not JSON"},
    {"oversized", document(kHttps, kHttps) + std::string(kMaxDiscoveryBytes, ' '), kHttps,
     "larger than"},
};

class OidcDiscoveryRefusals : public ::testing::TestWithParam<Refused> {};

TEST_P(OidcDiscoveryRefusals, SayWhy) {
  const auto d = parseDiscovery(GetParam().json, GetParam().issuer);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().find(GetParam().says), std::string::npos) << d.error();
}

INSTANTIATE_TEST_SUITE_P(All, OidcDiscoveryRefusals, ::testing::ValuesIn(kRefused),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace tollgate::auth
