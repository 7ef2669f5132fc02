// The error catalogue: one closed enum, one table mapping it to HTTP status, OpenAI `type` and
// `code`, and the four-string error body of spec §2.7 that every failure leaves the gateway in.
#pragma once

#include <string>
#include <string_view>

namespace tollgate {

enum class ErrorKind {
  InvalidJson,
  InvalidType,
  MissingParameter,
  InvalidValue,
  UnknownParameter,
  InvalidTags,
  InvalidMultipart,
  MissingApiKey,
  InvalidAuthorizationScheme,
  MalformedApiKey,
  InvalidApiKey,
  RevokedApiKey,
  KeyExpired,
  TeamSuspended,
  NotAMember,
  InsufficientBalance,
  DryrunNotAllowed,
  ModelNotAllowed,
  KeyRpmExceeded,
  KeyTpmExceeded,
  KeyConcurrencyExceeded,
  TeamRpmExceeded,
  TeamTpmExceeded,
  TeamConcurrencyExceeded,
  ModelRpmExceeded,
  ModelTpmExceeded,
  LimitsUnavailable,
  KeyBudgetExhausted,
  ModelNotFound,
  VariantNotFound,
  WrongEndpoint,
  RouteNotFound,
  MethodNotAllowed,
  UnsupportedMediaType,
  PayloadTooLarge,
  HeadersTooLarge,
  RequestTimeout,
  UpstreamError,
  UpstreamUnavailable,
  UpstreamTimeout,
  UpstreamRateLimited,
  UpstreamInvalidRequest,
  UpstreamAuthFailed,
  UpstreamStreamInterrupted,
  ServiceUnavailable,
  BillingUnavailable,
  GatewayFenced,
  NotSignedIn,
  SignInFailed,
  SignInThrottled,
  CsrfFailed,
  RoleForbidden,
  TeamLimitReached,
  ResourceNotFound,
  Conflict,
  IdentityProviderUnavailable,
  InvalidIdempotencyKey,
  IdempotencyKeyInUse,
  IdempotencyKeyReused,
  IdempotentAnswerNotKept,
  Internal,
};

/// The wire facts of one ErrorKind.
struct ErrorSpec {
  int status;
  std::string_view type;
  std::string_view code;
};

/// The single mapping from ErrorKind to status, type and code.
const ErrorSpec& errorSpec(ErrorKind kind);

/// A failure on the request path: what went wrong, for the client, and which parameter caused it.
struct Error {
  ErrorKind kind;
  std::string message;
  std::string param;

  int status() const { return errorSpec(kind).status; }
};

/// `{"error":{"message":…,"type":…,"code":…,"param":…}}`, all four members strings.
std::string errorBody(const Error& error);

}  // namespace tollgate
