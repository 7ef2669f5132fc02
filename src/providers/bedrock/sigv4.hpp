// AWS Signature Version 4, sans I/O: the canonical request, the string to sign, the signing key
// and the signature of a request, as AWS's general reference defines them. Pure functions of
// their inputs (the time is one of them), so that published test vectors check them.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tollgate::providers::bedrock::sigv4 {

/// What a signature covers.
struct Request {
  std::string_view method;
  /// The canonical URI (see canonicalUri), and the canonical query ("" for none).
  std::string_view canonical_uri;
  std::string_view canonical_query;
  /// The signed headers: lower-case names, sorted by name, values already trimmed.
  std::vector<std::pair<std::string, std::string>> headers;
  /// Hex SHA-256 of the payload (sha256Hex of the body).
  std::string_view payload_hash;
};

/// Where and when the signature applies.
struct Scope {
  std::string_view amz_date;  ///< "YYYYMMDDTHHMMSSZ"; its first 8 characters are the day.
  std::string_view region;
  std::string_view service;
};

/// Lower-case hex SHA-256 of `bytes`.
std::string sha256Hex(std::string_view bytes);

/// `time` as x-amz-date writes it, "20150830T123600Z" (UTC).
std::string amzDate(std::chrono::system_clock::time_point time);

/// The canonical URI of a path as it is sent (each segment already percent-encoded once): for
/// every service but S3, each segment is encoded once more, so "%3A" becomes "%253A". "/" for "".
std::string canonicalUri(std::string_view path);

/// The canonical request: method, URI, query, the headers (name:value lines), the signed
/// header names joined by ';', and the payload hash, one per line.
std::string canonicalRequest(const Request& r);

/// "host;x-amz-date;…": the names of `r`'s headers.
std::string signedHeaders(const Request& r);

/// "AWS4-HMAC-SHA256", the date, the credential scope, and the canonical request's hash.
std::string stringToSign(const Scope& scope, std::string_view canonical_request);

/// The hex HMAC-SHA256 of `string_to_sign` under the key derived from `secret` and `scope`.
std::string signature(std::string_view secret, const Scope& scope, std::string_view string_to_sign);

/// The Authorization header's value for `access_key_id`.
std::string authorization(std::string_view access_key_id, const Scope& scope,
                          std::string_view signed_headers, std::string_view signature);

}  // namespace tollgate::providers::bedrock::sigv4
