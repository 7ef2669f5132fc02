// What the request decoders of every endpoint share: their error shapes, `tollgate::tags`, and
// the refusal of unknown fields.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/json.hpp"
#include "core/result.hpp"

namespace tollgate::openai {

/// Spend-log labels, as the client sent them (tollgate::tags).
using Tags = std::vector<std::pair<std::string, std::string>>;

/// `param` has the wrong JSON type: it "must be `expected`".
Error invalidType(std::string_view param, std::string_view expected);

/// `param` breaks a rule, told by `message`.
Error invalidValue(std::string_view param, std::string message);

/// `param` is required and missing.
Error missingParameter(std::string_view param);

/// Parses a JSON endpoint's request body in place into `doc` (no repeated keys): invalid_json
/// when it is not JSON, invalid_type when it is not an object. `values`, when given, receives
/// where each member's value was in the body as sent (json::parseInPlace).
std::optional<Error> parseObjectBody(rapidjson::Document& doc, std::string& body,
                                     std::vector<json::Span>* values = nullptr);

/// The members of a request body that decodeObjectBody did not apply.
struct UnknownMembers {
  std::vector<std::string> names;
  bool refused = false;  ///< tollgate::deny_unknown_fields was true.
  /// The unknown_parameter error the request asked for, if any: checked after the decoder's
  /// own rules (a missing model is said first).
  std::optional<Error> refusal();
};

/// Parses `body` as parseObjectBody does, then hands each member `known` names to `apply` (an
/// explicit null means "not given", as OpenAI treats it: skipped); the first error `apply`
/// returns ends it. What is left are the unknown members.
Result<UnknownMembers> decodeObjectBody(
    rapidjson::Document& doc, std::string& body, const std::function<bool(std::string_view)>& known,
    const std::function<std::optional<Error>(std::string_view, const rapidjson::Value&)>& apply,
    std::vector<json::Span>* values = nullptr);

/// Validates `tollgate::tags` (an object of at most 32 string tags, names 1 to 64 characters not
/// starting with tollgate::, values at most 256, no control characters) and appends them.
std::optional<Error> decodeTags(const rapidjson::Value& v, Tags& out);

/// `tollgate::cache_options`: whether the inference cache is read and written for a request, and
/// the oldest entry a read takes (TensorZero's shape: `{"enabled": "on" | "off" | "read_only" |
/// "write_only", "max_age_s": N}`; `enabled` absent or null is "off", `max_age_s` a whole number
/// of seconds or null).
struct CacheOptions {
  enum class Mode { Off, On, ReadOnly, WriteOnly };
  Mode mode = Mode::Off;
  std::optional<std::int64_t> max_age_s;  ///< nullopt: any age.

  bool reads() const { return mode == Mode::On || mode == Mode::ReadOnly; }
  /// The oldest creation time (ms since the epoch) a read at `now_ms` takes: 0 (any) without
  /// max_age_s, or when it reaches back before the epoch (so no age, however large, overflows).
  std::int64_t notBefore(std::int64_t now_ms) const {
    constexpr std::int64_t kMsPerSecond = 1000;
    if (!max_age_s || *max_age_s >= now_ms / kMsPerSecond) {
      return 0;
    }
    return now_ms - *max_age_s * kMsPerSecond;
  }
  bool writes() const { return mode == Mode::On || mode == Mode::WriteOnly; }
};

/// Validates `tollgate::cache_options` into `out`.
std::optional<Error> decodeCacheOptions(const rapidjson::Value& v, CacheOptions& out);

/// The gateway's own fields every JSON endpoint but chat shares: `tollgate::tags` (into `tags`),
/// `tollgate::cache_options` (into `cache`), `tollgate::dryrun` (into `dryrun`) and
/// `tollgate::deny_unknown_fields` (booleans). Call it with one of those names only.
std::optional<Error> decodeOwnField(std::string_view name, const rapidjson::Value& v, Tags& tags,
                                    bool& dryrun, CacheOptions& cache);

/// The unknown_parameter error listing `unknown` sorted; `unknown` must not be empty.
Error unknownFields(std::vector<std::string> unknown);

/// A positive int32 (`param` >= 1), e.g. dimensions or top_n.
std::optional<Error> checkPositiveInt32(std::string_view param, const rapidjson::Value& v);

}  // namespace tollgate::openai
