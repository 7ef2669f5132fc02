#include "core/error.hpp"

#include <array>

#include "core/json.hpp"

namespace tollgate {
namespace {

constexpr std::string_view kInvalidRequest = "invalid_request_error";
constexpr std::string_view kApiError = "api_error";
constexpr std::string_view kAuthentication = "authentication_error";
constexpr std::string_view kPermission = "permission_error";
constexpr std::string_view kRateLimit = "rate_limit_error";

struct Row {
  ErrorKind kind;
  ErrorSpec spec;
};

// Order follows the enum; errorSpec() checks the index so a mismatch fails loudly in tests.
constexpr std::array kTable{
    Row{ErrorKind::InvalidJson, {400, kInvalidRequest, "invalid_json"}},
    Row{ErrorKind::InvalidType, {400, kInvalidRequest, "invalid_type"}},
    Row{ErrorKind::MissingParameter, {400, kInvalidRequest, "missing_required_parameter"}},
    Row{ErrorKind::InvalidValue, {400, kInvalidRequest, "invalid_value"}},
    Row{ErrorKind::UnknownParameter, {400, kInvalidRequest, "unknown_parameter"}},
    Row{ErrorKind::InvalidTags, {400, kInvalidRequest, "invalid_tags"}},
    Row{ErrorKind::InvalidMultipart, {400, kInvalidRequest, "invalid_multipart"}},
    Row{ErrorKind::MissingApiKey, {401, kAuthentication, "missing_api_key"}},
    Row{ErrorKind::InvalidAuthorizationScheme,
        {401, kAuthentication, "invalid_authorization_scheme"}},
    Row{ErrorKind::MalformedApiKey, {401, kAuthentication, "malformed_api_key"}},
    Row{ErrorKind::InvalidApiKey, {401, kAuthentication, "invalid_api_key"}},
    Row{ErrorKind::RevokedApiKey, {401, kAuthentication, "revoked_api_key"}},
    Row{ErrorKind::KeyExpired, {401, kAuthentication, "key_expired"}},
    Row{ErrorKind::TeamSuspended, {403, kPermission, "team_suspended"}},
    Row{ErrorKind::NotAMember, {403, kPermission, "not_a_member"}},
    Row{ErrorKind::InsufficientBalance, {403, kPermission, "insufficient_balance"}},
    Row{ErrorKind::DryrunNotAllowed, {403, kPermission, "dryrun_not_allowed"}},
    Row{ErrorKind::ModelNotAllowed, {403, kPermission, "model_not_allowed"}},
    Row{ErrorKind::KeyRpmExceeded, {429, kRateLimit, "key_rpm_exceeded"}},
    Row{ErrorKind::KeyTpmExceeded, {429, kRateLimit, "key_tpm_exceeded"}},
    Row{ErrorKind::KeyConcurrencyExceeded, {429, kRateLimit, "key_concurrency_exceeded"}},
    Row{ErrorKind::TeamRpmExceeded, {429, kRateLimit, "team_rpm_exceeded"}},
    Row{ErrorKind::TeamTpmExceeded, {429, kRateLimit, "team_tpm_exceeded"}},
    Row{ErrorKind::TeamConcurrencyExceeded, {429, kRateLimit, "team_concurrency_exceeded"}},
    Row{ErrorKind::ModelRpmExceeded, {429, kRateLimit, "model_rpm_exceeded"}},
    Row{ErrorKind::ModelTpmExceeded, {429, kRateLimit, "model_tpm_exceeded"}},
    Row{ErrorKind::LimitsUnavailable, {503, kApiError, "limits_unavailable"}},
    Row{ErrorKind::KeyBudgetExhausted, {403, kPermission, "key_budget_exhausted"}},
    Row{ErrorKind::ModelNotFound, {404, kInvalidRequest, "model_not_found"}},
    Row{ErrorKind::VariantNotFound, {404, kInvalidRequest, "variant_not_found"}},
    Row{ErrorKind::WrongEndpoint, {400, kInvalidRequest, "model_wrong_endpoint"}},
    Row{ErrorKind::RouteNotFound, {404, kInvalidRequest, "not_found"}},
    Row{ErrorKind::MethodNotAllowed, {405, kInvalidRequest, "method_not_allowed"}},
    Row{ErrorKind::UnsupportedMediaType, {415, kInvalidRequest, "unsupported_media_type"}},
    Row{ErrorKind::PayloadTooLarge, {413, kInvalidRequest, "payload_too_large"}},
    Row{ErrorKind::HeadersTooLarge, {431, kInvalidRequest, "headers_too_large"}},
    Row{ErrorKind::RequestTimeout, {408, kInvalidRequest, "request_timeout"}},
    Row{ErrorKind::UpstreamError, {502, kApiError, "upstream_error"}},
    Row{ErrorKind::UpstreamUnavailable, {502, kApiError, "upstream_unavailable"}},
    Row{ErrorKind::UpstreamTimeout, {504, kApiError, "upstream_timeout"}},
    Row{ErrorKind::UpstreamRateLimited, {429, kRateLimit, "upstream_rate_limited"}},
    Row{ErrorKind::UpstreamInvalidRequest, {400, kInvalidRequest, "upstream_invalid_request"}},
    Row{ErrorKind::UpstreamAuthFailed, {502, kApiError, "upstream_auth_failed"}},
    Row{ErrorKind::UpstreamStreamInterrupted, {502, kApiError, "upstream_stream_interrupted"}},
    Row{ErrorKind::ServiceUnavailable, {503, kApiError, "service_unavailable"}},
    Row{ErrorKind::BillingUnavailable, {503, kApiError, "billing_unavailable"}},
    Row{ErrorKind::GatewayFenced, {503, kApiError, "gateway_fenced"}},
    Row{ErrorKind::NotSignedIn, {401, kAuthentication, "not_signed_in"}},
    Row{ErrorKind::SignInFailed, {401, kAuthentication, "sign_in_failed"}},
    Row{ErrorKind::SignInThrottled, {429, kRateLimit, "sign_in_throttled"}},
    Row{ErrorKind::CsrfFailed, {403, kPermission, "csrf_failed"}},
    Row{ErrorKind::RoleForbidden, {403, kPermission, "role_forbidden"}},
    Row{ErrorKind::TeamLimitReached, {403, kPermission, "team_limit_reached"}},
    Row{ErrorKind::ResourceNotFound, {404, kInvalidRequest, "resource_not_found"}},
    Row{ErrorKind::Conflict, {409, kInvalidRequest, "conflict"}},
    Row{ErrorKind::IdentityProviderUnavailable, {502, kApiError, "identity_provider_unavailable"}},
    Row{ErrorKind::InvalidIdempotencyKey, {400, kInvalidRequest, "invalid_idempotency_key"}},
    Row{ErrorKind::IdempotencyKeyInUse, {409, kInvalidRequest, "idempotency_key_in_use"}},
    Row{ErrorKind::IdempotencyKeyReused, {422, kInvalidRequest, "idempotency_key_reused"}},
    Row{ErrorKind::IdempotentAnswerNotKept, {410, kInvalidRequest, "idempotent_answer_not_kept"}},
    Row{ErrorKind::Internal, {500, kApiError, "internal_error"}},
};

constexpr bool tableFollowsEnum() {
  for (std::size_t i = 0; i < kTable.size(); ++i) {
    if (static_cast<std::size_t>(kTable[i].kind) != i) {
      return false;
    }
  }
  return true;
}
static_assert(tableFollowsEnum(), "kTable rows must follow ErrorKind's order");
static_assert(kTable.size() == static_cast<std::size_t>(ErrorKind::Internal) + 1);

}  // namespace

const ErrorSpec& errorSpec(ErrorKind kind) { return kTable[static_cast<std::size_t>(kind)].spec; }

std::string errorBody(const Error& error) {
  const ErrorSpec& spec = errorSpec(error.kind);
  json::Writer w;
  w.startObject();
  w.key("error");
  w.startObject();
  w.field("message", error.message);
  w.field("type", spec.type);
  w.field("code", spec.code);
  w.field("param", error.param);
  w.endObject();
  w.endObject();
  return w.take();
}

}  // namespace tollgate
