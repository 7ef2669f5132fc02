#include "core/error.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace tollgate {
namespace {

TEST(ErrorTable, MapsKindsToStatusTypeAndCode) {
  struct Case {
    ErrorKind kind;
    int status;
    std::string_view type;
    std::string_view code;
  };
  const Case cases[] = {
      {ErrorKind::InvalidJson, 400, "invalid_request_error", "invalid_json"},
      {ErrorKind::InvalidValue, 400, "invalid_request_error", "invalid_value"},
      {ErrorKind::UnknownParameter, 400, "invalid_request_error", "unknown_parameter"},
      {ErrorKind::KeyExpired, 401, "authentication_error", "key_expired"},
      {ErrorKind::ModelNotAllowed, 403, "permission_error", "model_not_allowed"},
      {ErrorKind::ModelNotFound, 404, "invalid_request_error", "model_not_found"},
      {ErrorKind::VariantNotFound, 404, "invalid_request_error", "variant_not_found"},
      {ErrorKind::MethodNotAllowed, 405, "invalid_request_error", "method_not_allowed"},
      {ErrorKind::PayloadTooLarge, 413, "invalid_request_error", "payload_too_large"},
      {ErrorKind::HeadersTooLarge, 431, "invalid_request_error", "headers_too_large"},
      {ErrorKind::RequestTimeout, 408, "invalid_request_error", "request_timeout"},
      {ErrorKind::UpstreamError, 502, "api_error", "upstream_error"},
      {ErrorKind::UpstreamTimeout, 504, "api_error", "upstream_timeout"},
      {ErrorKind::UpstreamRateLimited, 429, "rate_limit_error", "upstream_rate_limited"},
      {ErrorKind::GatewayFenced, 503, "api_error", "gateway_fenced"},
      {ErrorKind::Internal, 500, "api_error", "internal_error"},
  };
  for (const Case& c : cases) {
    const ErrorSpec& spec = errorSpec(c.kind);
    EXPECT_EQ(spec.status, c.status) << c.code;
    EXPECT_EQ(spec.type, c.type) << c.code;
    EXPECT_EQ(spec.code, c.code);
  }
}

TEST(ErrorBody, HasFourStringMembers) {
  const std::string body = errorBody(Error{ErrorKind::InvalidValue, "n must be 1 \"x\"", "n"});
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  ASSERT_FALSE(doc.HasParseError());
  const auto& e = doc["error"];
  ASSERT_EQ(e.MemberCount(), 4U);
  EXPECT_STREQ(e["message"].GetString(), "n must be 1 \"x\"");
  EXPECT_STREQ(e["type"].GetString(), "invalid_request_error");
  EXPECT_STREQ(e["code"].GetString(), "invalid_value");
  EXPECT_STREQ(e["param"].GetString(), "n");
}

TEST(ErrorBody, EmptyParamIsAnEmptyString) {
  rapidjson::Document doc;
  doc.Parse(errorBody(Error{ErrorKind::Internal, "boom", ""}).c_str());
  ASSERT_TRUE(doc["error"]["param"].IsString());
  EXPECT_STREQ(doc["error"]["param"].GetString(), "");
}

}  // namespace
}  // namespace tollgate
