#include "openai/fields.hpp"

#include <algorithm>
#include <array>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::openai {
namespace {

constexpr std::size_t kMaxTags = 32;
constexpr std::size_t kMaxTagKeyChars = 64;
constexpr std::size_t kMaxTagValueChars = 256;

/// `tollgate::tags`: labels for the spend log, an object of string -> string.
std::optional<Error> checkTags(const rapidjson::Value& v) {
  const auto bad = [](std::string param, std::string message) {
    return Error{ErrorKind::InvalidTags, std::move(message), std::move(param)};
  };
  if (!v.IsObject()) {
    return bad("tollgate::tags",
               "tollgate::tags must be an object of strings, e.g. {\"feature\": \"search\"}");
  }
  if (v.MemberCount() > kMaxTags) {
    return bad("tollgate::tags",
               "tollgate::tags holds at most " + std::to_string(kMaxTags) + " tags");
  }
  for (const auto& m : v.GetObject()) {
    const std::string_view key = json::view(m.name);
    const std::string param = "tollgate::tags." + text::printable(key, kMaxTagKeyChars * 4);
    if (key.empty() || text::codePoints(key) > kMaxTagKeyChars || text::hasControlCharacters(key)) {
      return bad(param, "tag names are 1 to " + std::to_string(kMaxTagKeyChars) +
                            " characters, without control characters");
    }
    if (key.starts_with("tollgate::")) {
      return bad(param, "tag names starting with tollgate:: are reserved");
    }
    if (!m.value.IsString()) {
      return bad(param, "tag values must be strings");
    }
    const std::string_view value = json::view(m.value);
    if (text::codePoints(value) > kMaxTagValueChars || text::hasControlCharacters(value)) {
      return bad(param, "tag values are at most " + std::to_string(kMaxTagValueChars) +
                            " characters, without control characters");
    }
  }
  return std::nullopt;
}

}  // namespace

Error invalidType(std::string_view param, std::string_view expected) {
  return Error{ErrorKind::InvalidType, std::string(param) + " must be " + std::string(expected),
               std::string(param)};
}

Error invalidValue(std::string_view param, std::string message) {
  return Error{ErrorKind::InvalidValue, std::move(message), std::string(param)};
}

Error missingParameter(std::string_view param) {
  return Error{ErrorKind::MissingParameter, std::string(param) + " is required",
               std::string(param)};
}

std::optional<Error> parseObjectBody(rapidjson::Document& doc, std::string& body,
                                     std::vector<json::Span>* values) {
  if (auto failure = json::parseInPlace(doc, body, json::Keys::Unique, values)) {
    return Error{ErrorKind::InvalidJson, "request body is not valid JSON: " + failure->reason,
                 std::move(failure->path)};
  }
  if (!doc.IsObject()) {
    return Error{ErrorKind::InvalidType, "request body must be a JSON object", ""};
  }
  return std::nullopt;
}

std::optional<Error> UnknownMembers::refusal() {
  if (!refused || names.empty()) {
    return std::nullopt;
  }
  return unknownFields(std::move(names));
}

Result<UnknownMembers> decodeObjectBody(
    rapidjson::Document& doc, std::string& body, const std::function<bool(std::string_view)>& known,
    const std::function<std::optional<Error>(std::string_view, const rapidjson::Value&)>& apply,
    std::vector<json::Span>* values) {
  if (auto err = parseObjectBody(doc, body, values)) {
    return std::move(*err);
  }
  UnknownMembers unknown;
  for (const auto& m : doc.GetObject()) {
    const std::string_view name = json::view(m.name);
    if (!known(name)) {
      unknown.names.emplace_back(name);
      continue;
    }
    if (m.value.IsNull()) {
      continue;
    }
    if (auto err = apply(name, m.value)) {
      return std::move(*err);
    }
    unknown.refused =
        unknown.refused || (name == "tollgate::deny_unknown_fields" && m.value.GetBool());
  }
  return unknown;
}

std::optional<Error> decodeTags(const rapidjson::Value& v, Tags& out) {
  if (auto err = checkTags(v)) {
    return err;
  }
  for (const auto& m : v.GetObject()) {
    out.emplace_back(json::view(m.name), json::view(m.value));
  }
  return std::nullopt;
}

std::optional<Error> decodeCacheOptions(const rapidjson::Value& v, CacheOptions& out) {
  constexpr std::string_view kName = "tollgate::cache_options";
  if (!v.IsObject()) {
    return invalidType(kName, "an object");
  }
  using Mode = CacheOptions::Mode;
  constexpr std::array<std::pair<std::string_view, Mode>, 4> kModes{
      {{"on", Mode::On},
       {"off", Mode::Off},
       {"read_only", Mode::ReadOnly},
       {"write_only", Mode::WriteOnly}}};
  out.mode = Mode::Off;  // What an absent (or null) `enabled` means: nothing is kept unasked.
  if (const rapidjson::Value* enabled = json::member(v, "enabled");
      enabled != nullptr && !enabled->IsNull()) {
    const auto mode = std::find_if(kModes.begin(), kModes.end(), [&](const auto& m) {
      return enabled->IsString() && json::view(*enabled) == m.first;
    });
    if (mode == kModes.end()) {
      return invalidValue("tollgate::cache_options.enabled",
                          "tollgate::cache_options.enabled must be \"on\", \"off\", "
                          "\"read_only\" or \"write_only\"");
    }
    out.mode = mode->second;
  }
  out.max_age_s.reset();
  for (const auto& m : v.GetObject()) {
    const std::string_view member = json::view(m.name);
    if (member == "enabled") {
      continue;
    }
    if (member != "max_age_s") {
      return Error{ErrorKind::UnknownParameter,
                   "tollgate::cache_options takes only enabled and max_age_s, not '" +
                       text::printable(member) + "'",
                   "tollgate::cache_options." + text::printable(member)};
    }
    if (m.value.IsNull()) {
      continue;
    }
    if (!m.value.IsInt64() || m.value.GetInt64() < 0) {
      return invalidValue("tollgate::cache_options.max_age_s",
                          "tollgate::cache_options.max_age_s must be a whole number of seconds, "
                          "0 or more, or null");
    }
    out.max_age_s = m.value.GetInt64();
  }
  return std::nullopt;
}

std::optional<Error> decodeOwnField(std::string_view name, const rapidjson::Value& v, Tags& tags,
                                    bool& dryrun, CacheOptions& cache) {
  if (name == "tollgate::tags") {
    return decodeTags(v, tags);
  }
  if (name == "tollgate::cache_options") {
    return decodeCacheOptions(v, cache);
  }
  // tollgate::dryrun, tollgate::deny_unknown_fields
  if (!v.IsBool()) {
    return invalidType(name, "a boolean");
  }
  if (name == "tollgate::dryrun") {
    dryrun = v.GetBool();
  }
  return std::nullopt;
}

Error unknownFields(std::vector<std::string> unknown) {
  std::sort(unknown.begin(), unknown.end());
  std::string list;
  for (const std::string& u : unknown) {
    list += (list.empty() ? "" : ", ") + u;
  }
  return Error{ErrorKind::UnknownParameter, "unknown fields: " + list, unknown.front()};
}

std::optional<Error> checkPositiveInt32(std::string_view param, const rapidjson::Value& v) {
  if (!v.IsNumber() || !(v.IsInt64() || v.IsUint64())) {
    return invalidType(param, "an integer");
  }
  if (!v.IsInt() || v.GetInt() < 1) {
    return invalidValue(param, std::string(param) + " must be an integer from 1 to 2147483647");
  }
  return std::nullopt;
}

}  // namespace tollgate::openai
