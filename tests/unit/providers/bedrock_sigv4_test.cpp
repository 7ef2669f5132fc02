// SigV4 against AWS's published test suite (get-vanilla), the canonical URI's double encoding,
// and the shared-credentials file: its format, and its re-reading when it changes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "providers/bedrock/credentials.hpp"
#include "providers/bedrock/sigv4.hpp"

namespace tollgate::providers::bedrock {
namespace {

constexpr std::string_view kExampleSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
constexpr std::string_view kEmptyHash =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(SigV4, GetVanillaFromAwsTestSuite) {
  sigv4::Request r;
  r.method = "GET";
  const std::string uri = sigv4::canonicalUri("/");
  r.canonical_uri = uri;
  r.headers = {{"host", "example.amazonaws.com"}, {"x-amz-date", "20150830T123600Z"}};
  const std::string hash = sigv4::sha256Hex("");
  EXPECT_EQ(hash, kEmptyHash);
  r.payload_hash = hash;
  const std::string canonical = sigv4::canonicalRequest(r);
  EXPECT_EQ(canonical,
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\n" +
                std::string(kEmptyHash));
  const sigv4::Scope scope{"20150830T123600Z", "us-east-1", "service"};
  const std::string to_sign = sigv4::stringToSign(scope, canonical);
  EXPECT_EQ(to_sign,
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request\n"
            "bb579772317eb040ac9ed261061d46c1f17a8133879d6129b6e1c25292927e63");
  const std::string sig = sigv4::signature(kExampleSecret, scope, to_sign);
  EXPECT_EQ(sig, "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
  EXPECT_EQ(sigv4::authorization("AKIDEXAMPLE", scope, sigv4::signedHeaders(r), sig),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4, CanonicalUriEncodesEachSegmentAgain) {
  EXPECT_EQ(sigv4::canonicalUri("/model/anthropic.claude-3-haiku-v1%3A0/converse"),
            "/model/anthropic.claude-3-haiku-v1%253A0/converse");
  EXPECT_EQ(sigv4::canonicalUri(""), "/");
  EXPECT_EQ(sigv4::canonicalUri("/a b/c~d"), "/a%20b/c~d");
}

TEST(SigV4, AmzDateIsUtc) {
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1440938160));
  EXPECT_EQ(sigv4::amzDate(t), "20150830T123600Z");
}

TEST(BedrockCredentials, ParsesProfilesCommentsAndSessionTokens) {
  const std::string text =
      "# a comment\n"
      "[default]\n"
      "aws_access_key_id = AKIDDEFAULT\n"
      "aws_secret_access_key=default-secret\n"
      "\n"
      "; another comment\n"
      "[profile work]\r\n"
      "  aws_access_key_id = AKIDWORK  \r\n"
      "aws_secret_access_key = work/secret+key\r\n"
      "aws_session_token = token==\r\n"
      "region = us-west-2\n";
  auto d = parseCredentialsFile(text, "default");
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->access_key_id, "AKIDDEFAULT");
  EXPECT_EQ(d->secret_access_key, "default-secret");
  EXPECT_EQ(d->session_token, "");
  auto w = parseCredentialsFile(text, "work");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->access_key_id, "AKIDWORK");
  EXPECT_EQ(w->secret_access_key, "work/secret+key");
  EXPECT_EQ(w->session_token, "token==");
}

TEST(BedrockCredentials, AMissingProfileOrKeyIsAnAuthErrorNamingNoValue) {
  auto none =
      parseCredentialsFile("[default]\naws_access_key_id=A\naws_secret_access_key=S\n", "other");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().kind, ErrorKind::UpstreamAuthFailed);
  EXPECT_NE(none.error().message.find("[other]"), std::string::npos);
  auto half = parseCredentialsFile("[p]\naws_access_key_id=A\n# aws_secret_access_key=S\n", "p");
  ASSERT_FALSE(half.ok());
  EXPECT_EQ(half.error().kind, ErrorKind::UpstreamAuthFailed);
}

TEST(BedrockCredentials, ConfiguredKeysAreUsedAsTheyAre) {
  config::AwsCredentials aws;
  aws.access_key_id = "AKID";
  aws.secret_access_key = "secret";
  aws.session_token = "tok";
  auto k = currentKeys(aws);
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k->access_key_id, "AKID");
  EXPECT_EQ(k->session_token, "tok");
}

TEST(BedrockCredentials, TheFileIsReadAgainWhenItChanges) {
  const std::string path =
      ::testing::TempDir() + "bedrock_credentials_" + std::to_string(::getpid());
  const auto write = [&](std::string_view text) {
    std::ofstream out(path, std::ios::trunc);
    out << text;
  };
  write("[default]\naws_access_key_id=AKIDOLD\naws_secret_access_key=old\n");
  config::AwsCredentials aws;
  aws.credentials_file = path;
  auto first = currentKeys(aws);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(first->access_key_id, "AKIDOLD");
  write(
      "[default]\naws_access_key_id=AKIDNEWER\naws_secret_access_key=newer\n"
      "aws_session_token=t\n");
  auto second = currentKeys(aws);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->access_key_id, "AKIDNEWER");
  EXPECT_EQ(second->secret_access_key, "newer");
  EXPECT_EQ(second->session_token, "t");
  aws.profile = "missing";
  auto missing = currentKeys(aws);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().kind, ErrorKind::UpstreamAuthFailed);
  EXPECT_EQ(missing.error().message.find(path), std::string::npos);  // No path to a client.
  std::remove(path.c_str());
  aws.profile = "default";
  auto gone = currentKeys(aws);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().kind, ErrorKind::UpstreamAuthFailed);
}

}  // namespace
}  // namespace tollgate::providers::bedrock
