// Azure OpenAI: an OpenAI-wire request at the deployment's address with an `api-key` header, and
// the content filter's refusal named by category.
#include "providers/azure/azure.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "openai/chat_request.hpp"

namespace tollgate::providers::azure {
namespace {

config::Provider provider() {
  config::Provider p;
  p.name = "azure";
  p.type = config::ProviderType::Azure;
  p.api_base.host = "res.openai.azure.com";
  p.model = "gpt-4o prod";
  p.api_version = "2024-10-21";
  p.api_key = "azure-key-0123456789";
  return p;
}

TEST(AzureTest, ARequestGoesToItsDeploymentWithItsKey) {
  const config::Provider p = provider();
  std::string body = R"({"model":"m","messages":[{"role":"user","content":"hi"}]})";
  auto req = openai::decodeChatRequest(body);
  ASSERT_TRUE(req.ok());
  const openai::ResponseMeta meta;
  auto exchange = azureAdapter().chat(*req, p, meta);
  auto r = exchange->request();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->path, "/openai/deployments/gpt-4o%20prod/chat/completions?api-version=2024-10-21");
  const auto header = [&](std::string_view name) {
    auto it = std::find_if(r->headers.begin(), r->headers.end(),
                           [&](const auto& h) { return h.first == name; });
    return it == r->headers.end() ? std::string("(none)") : it->second;
  };
  EXPECT_EQ(header("api-key"), "azure-key-0123456789");
  EXPECT_EQ(header("Authorization"), "(none)");  // The key is never sent as a bearer token.
}

TEST(AzureTest, EveryEndpointKeepsTheBasePath) {
  config::Provider p = provider();
  p.api_base.path = "/proxy";
  EXPECT_EQ(deploymentPath(p, "/proxy/embeddings"),
            "/proxy/openai/deployments/gpt-4o%20prod/embeddings?api-version=2024-10-21");
  EXPECT_EQ(deploymentPath(p, "/proxy/audio/transcriptions"),
            "/proxy/openai/deployments/gpt-4o%20prod/audio/transcriptions?api-version=2024-10-21");
}

TEST(AzureTest, TheContentFilterNamesItsCategories) {
  const Error e = translateError(400, R"({"error":{"message":"The response was filtered",
      "type":null,"param":"prompt","code":"content_filter","status":400,
      "innererror":{"code":"ResponsibleAIPolicyViolation","content_filter_result":{
        "hate":{"filtered":true,"severity":"high"},"jailbreak":{"filtered":false,"detected":false},
        "self_harm":{"filtered":false,"severity":"safe"},
        "violence":{"filtered":true,"severity":"medium"}}}}})");
  EXPECT_EQ(e.kind, ErrorKind::UpstreamInvalidRequest);
  EXPECT_EQ(e.message,
            "the provider's content filter refused the prompt (hate: high, violence: medium)");
  // Any other answer is an OpenAI upstream's.
  EXPECT_EQ(translateError(429, R"({"error":{"code":"429","message":"Rate limit"}})").kind,
            ErrorKind::UpstreamRateLimited);
  const Error auth = translateError(401, R"({"error":{"message":"key azure-key-0123456789"}})");
  EXPECT_EQ(auth.kind, ErrorKind::UpstreamAuthFailed);
  EXPECT_EQ(auth.message.find("azure-key"), std::string::npos);
}

}  // namespace
}  // namespace tollgate::providers::azure
