// The pure steps of signing in with an OpenID Connect provider: the return path never leaves the
// console, the authorization request carries PKCE S256 and percent-encodes every value, the token
// request authenticates as the provider asks, email domains, and the sign-in page's error texts.
#include "console/oidc_flow.hpp"

#include <gtest/gtest.h>

#include "core/base64.hpp"
#include "core/text.hpp"

namespace tollgate::console {
namespace {

TEST(OidcFlowTest, AReturnPathIsAlwaysAConsolePath) {
  EXPECT_EQ(safeReturnTo("/console/teams/x?tab=keys"), "/console/teams/x?tab=keys");
  for (const std::string_view bad :
       {"", "/", "https://evil.example/console/", "//evil.example/console/", "/console//evil",
        "/console/\\evil", "/console/a b", "/console/x\r\nSet-Cookie: a=b", "/consolex",
        "/console/@evil", "javascript:alert(1)", "/v1/chat/completions"}) {
    EXPECT_EQ(safeReturnTo(bad), "/console/") << bad;
  }
  EXPECT_EQ(safeReturnTo("/console/" + std::string(600, 'a')), "/console/");
  EXPECT_EQ(safeReturnTo(std::string("/console/\xC3\xA9")), "/console/");
}

TEST(OidcFlowTest, PercentEncodingKeepsOnlyUnreservedCharacters) {
  EXPECT_EQ(text::percentEncode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(text::percentEncode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
}

TEST(OidcFlowTest, SplitsAUrlForTheOutboundPort) {
  const auto a = splitUrl("https://id.example.com/realms/x/token?y=1");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->base.tls);
  EXPECT_EQ(a->base.host, "id.example.com");
  EXPECT_EQ(a->base.port, "443");
  EXPECT_EQ(a->path, "/realms/x/token?y=1");
  const auto b = splitUrl("http://127.0.0.1:9000");
  ASSERT_TRUE(b);
  EXPECT_FALSE(b->base.tls);
  EXPECT_EQ(b->base.port, "9000");
  EXPECT_EQ(b->path, "/");
  const auto c = splitUrl("http://[::1]:8080/jwks");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->base.host, "::1");
  EXPECT_FALSE(splitUrl("ftp://id.example.com/"));
  EXPECT_FALSE(splitUrl("https://user:pw@id.example.com/"));
  EXPECT_FALSE(splitUrl("/relative"));
}

TEST(OidcFlowTest, TheDiscoveryUrlDropsOneTrailingSlash) {
  EXPECT_EQ(discoveryUrl("https://id.example.com"),
            "https://id.example.com/.well-known/openid-configuration");
  EXPECT_EQ(discoveryUrl("https://id.example.com/realms/x/"),
            "https://id.example.com/realms/x/.well-known/openid-configuration");
}

TEST(OidcFlowTest, TheAuthorizationRequestCarriesTheCodeFlowWithPkce) {
  auth::OidcDiscovery d;
  d.authorization_endpoint = "https://id.example.com/auth";
  const config::Oidc client{"https://id.example.com", "tolgate app", "secret"};
  const AuthorizationParams p{"https://gw.example.com/console/api/auth/oidc/callback", "st", "no",
                              "ch"};
  EXPECT_EQ(authorizationUrl(d, client, p),
            "https://id.example.com/auth?response_type=code&client_id=tolgate%20app&redirect_uri="
            "https%3A%2F%2Fgw.example.com%2Fconsole%2Fapi%2Fauth%2Foidc%2Fcallback&scope=openid%"
            "20email%20profile&state=st&nonce=no&code_challenge=ch&code_challenge_method=S256");
  d.authorization_endpoint = "https://id.example.com/auth?tenant=a";
  EXPECT_TRUE(authorizationUrl(d, client, p)
                  .starts_with("https://id.example.com/auth?tenant=a&response_type=code&"));
}

TEST(OidcFlowTest, TheTokenRequestUsesBasicUnlessOnlyPostIsSupported) {
  const config::Oidc client{"https://id.example.com", "app:1", "s3cr&t"};
  auth::OidcDiscovery d;
  EXPECT_EQ(clientAuthFor(d), ClientAuth::Basic);
  d.token_endpoint_auth_methods = {"client_secret_post"};
  EXPECT_EQ(clientAuthFor(d), ClientAuth::Post);
  d.token_endpoint_auth_methods = {"client_secret_post", "client_secret_basic"};
  EXPECT_EQ(clientAuthFor(d), ClientAuth::Basic);

  const TokenRequest basic = tokenRequest(client, ClientAuth::Basic, "c/1", "https://r", "v");
  EXPECT_EQ(
      basic.body,
      "grant_type=authorization_code&code=c%2F1&redirect_uri=https%3A%2F%2Fr&code_verifier=v");
  ASSERT_EQ(basic.headers.size(), 2u);
  EXPECT_EQ(basic.headers[1].first, "Authorization");
  EXPECT_EQ(basic.headers[1].second, "Basic " + base64::encode("app%3A1:s3cr%26t"));

  const TokenRequest post = tokenRequest(client, ClientAuth::Post, "c", "https://r", "v");
  EXPECT_TRUE(post.body.ends_with("&client_id=app%3A1&client_secret=s3cr%26t"));
  EXPECT_EQ(post.headers.size(), 1u);
}

TEST(OidcFlowTest, EmailDomains) {
  EXPECT_TRUE(emailDomainAllowed("a@b.test", {}));
  EXPECT_TRUE(emailDomainAllowed("a@Acme.Test", {"acme.test"}));
  EXPECT_FALSE(emailDomainAllowed("a@evil.test", {"acme.test"}));
  EXPECT_FALSE(emailDomainAllowed("a@sub.acme.test", {"acme.test"}));
  EXPECT_FALSE(emailDomainAllowed("no-at-sign", {"acme.test"}));
}

TEST(OidcFlowTest, TheSignInPageShowsOnlyKnownErrorCodes) {
  for (const std::string_view code :
       {"sign_in_failed", "email_not_verified", "email_domain_not_allowed", "not_invited",
        "identity_provider_unavailable", "invalid_link"}) {
    EXPECT_FALSE(signInErrorText(code).empty()) << code;
  }
  EXPECT_TRUE(signInErrorText("<script>").empty());
}

TEST(OidcFlowTest, ConstantTimeEquals) {
  EXPECT_TRUE(constantTimeEquals("abc", "abc"));
  EXPECT_FALSE(constantTimeEquals("abc", "abd"));
  EXPECT_FALSE(constantTimeEquals("abc", "ab"));
  EXPECT_TRUE(constantTimeEquals("", ""));
}

}  // namespace
}  // namespace tollgate::console

namespace tollgate::console {
namespace {

TEST(OidcFlowTest, APendingLoginRoundTripsAndNothingElseDecodes) {
  const PendingLogin login{"the-state", "the-nonce", "the-verifier", "/console/keys", 1234};
  const auto back = decodePendingLogin(encodePendingLogin(login));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->state, "the-state");
  EXPECT_EQ(back->nonce, "the-nonce");
  EXPECT_EQ(back->code_verifier, "the-verifier");
  EXPECT_EQ(back->return_to, "/console/keys");
  EXPECT_EQ(back->expires_at, 1234);
  for (const char* bad : {"", "a\nb\nc\n/console/", "a\nb\nc\n/console/\n", "a\nb\nc\n/console/\nx",
                          "\nb\nc\n/console/\n1", "a\nb\nc\n/console/\n1\n2"}) {
    EXPECT_FALSE(decodePendingLogin(bad)) << bad;
  }
}

}  // namespace
}  // namespace tollgate::console
