// The keys of the inference cache: a canonical text of a JSON value, so that requests the
// decoders read alike hash alike, and the SHA-256 keys of a request, of one embeddings input
// item, and of a decoded request for idempotency.
#pragma once

#include <rapidjson/document.h>

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace tollgate::cache {

/// `v` as canonical JSON: no whitespace; object members sorted by name in byte order, each name
/// once (the first occurrence, the one a lookup finds); strings escaped one way only (`"`, `\`
/// and control characters, the latter as \b \f \n \r \t or \u00XX, everything else as UTF-8);
/// a number with an integer value in int64 or uint64 range as that integer (1, 1.0, 1e0 and -0
/// alike), any other as the shortest text that reads back as the same double. Walks the value
/// without recursion. A non-finite double (which no parse produces) is written as null.
std::string canonicalJson(const rapidjson::Value& v);

/// SHA-256 of `bytes` as 64 lower-case hex digits.
std::string sha256Hex(std::string_view bytes);

/// What a request's cache key is made of besides its body.
struct KeyParts {
  std::string_view team_id;
  std::string_view endpoint;  ///< e.g. "/v1/chat/completions"
  std::string_view model_id;  ///< The configured model that answers, not the client's string.
  std::string_view variant;   ///< The function variant that answers; empty for a plain model.
  std::span<const std::string_view> ignored;  ///< Top-level body members left out of the key.
};

/// Top-level members of a chat request that do not change its answer: the model string (the
/// resolved model and variant are KeyParts of their own), how the answer is delivered, and the
/// gateway's own bookkeeping. service_tier and user stay in the key: they go upstream.
inline constexpr auto kChatIgnored = std::to_array<std::string_view>({
    "model",
    "stream",
    "stream_options",
    "tollgate::tags",
    "tollgate::episode_id",
    "tollgate::dryrun",
    "tollgate::cache_options",
    "tollgate::deny_unknown_fields",
    "tollgate::variant_name",
    "tollgate::include_raw_usage",
    "tollgate::include_raw_response",
});

/// Top-level members of an embeddings request left out of its request key; `input` is keyed
/// item by item instead (itemKey).
inline constexpr auto kEmbeddingIgnored =
    std::to_array<std::string_view>({"model", "input", "tollgate::tags", "tollgate::dryrun",
                                     "tollgate::cache_options", "tollgate::deny_unknown_fields"});

/// Top-level members of a rerank request left out of its key.
inline constexpr auto kRerankIgnored =
    std::to_array<std::string_view>({"model", "tollgate::tags", "tollgate::dryrun",
                                     "tollgate::cache_options", "tollgate::deny_unknown_fields"});

/// The cache key of a request: hex SHA-256 over length-prefixed team, endpoint, model id,
/// variant and the canonical body without the `ignored` members and without top-level nulls
/// (the decoders read an explicit null as "not given", and it is not sent upstream).
std::string requestKey(const KeyParts& parts, const rapidjson::Value& body);

/// The key of one embeddings input item under `request_key`.
std::string itemKey(std::string_view request_key, const rapidjson::Value& item);

/// The idempotency digest of a decoded request: hex SHA-256 of the whole canonical body (nothing
/// left out) and the `extra` name/value pairs in their order (a multipart form's fields).
std::string requestDigest(
    const rapidjson::Value& body,
    std::span<const std::pair<std::string_view, std::string_view>> extra = {});

}  // namespace tollgate::cache
