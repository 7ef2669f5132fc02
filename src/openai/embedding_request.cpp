#include "openai/embedding_request.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include "core/json.hpp"

namespace tollgate::openai {
namespace {

/// OpenAI's limit on the inputs of one request.
constexpr std::size_t kMaxInputs = 2048;

constexpr std::array<std::string_view, 4> kForwarded{"input", "dimensions", "encoding_format",
                                                     "user"};
constexpr std::array<std::string_view, 5> kOwn{"model", "tollgate::tags", "tollgate::cache_options",
                                               "tollgate::dryrun", "tollgate::deny_unknown_fields"};

bool isTokenId(const rapidjson::Value& v) {
  return v.IsInt64() && v.GetInt64() >= 0 && v.GetInt64() <= std::numeric_limits<int>::max();
}

/// One token array: non-empty, token ids only.
std::optional<Error> checkTokens(const rapidjson::Value& tokens, const std::string& where) {
  if (tokens.Empty()) {
    return invalidValue(where, where + " must not be an empty array");
  }
  for (const auto& t : tokens.GetArray()) {
    if (!isTokenId(t)) {
      return invalidType(where, "an array of token ids (integers from 0 to 2147483647)");
    }
  }
  return std::nullopt;
}

/// Checks `input` and counts its items.
std::optional<Error> checkInput(const rapidjson::Value& v, std::size_t& inputs) {
  constexpr std::string_view kShapes =
      "a string, an array of strings, an array of token ids or an array of token arrays";
  if (v.IsString()) {
    if (v.GetStringLength() == 0) {
      return invalidValue("input", "input must not be an empty string");
    }
    inputs = 1;
    return std::nullopt;
  }
  if (!v.IsArray()) {
    return invalidType("input", kShapes);
  }
  if (v.Empty()) {
    return invalidValue("input", "input must hold at least 1 item");
  }
  if (v[0].IsNumber()) {
    inputs = 1;
    return checkTokens(v, "input");
  }
  if (v.Size() > kMaxInputs) {
    return invalidValue("input", "input holds at most " + std::to_string(kMaxInputs) + " items");
  }
  const bool strings = v[0].IsString();
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const std::string where = "input[" + std::to_string(i) + "]";
    const rapidjson::Value& item = v[i];
    if (strings && item.IsString()) {
      if (item.GetStringLength() == 0) {
        return invalidValue(where, where + " must not be an empty string");
      }
    } else if (!strings && item.IsArray()) {
      if (auto err = checkTokens(item, where)) {
        return err;
      }
    } else {
      return invalidType("input", std::string(kShapes) + ", not a mix");
    }
  }
  inputs = v.Size();
  return std::nullopt;
}

/// Validates one present, non-null field and records it in `out`.
std::optional<Error> apply(std::string_view name, const rapidjson::Value& v,
                           EmbeddingRequest& out) {
  if (name == "model") {
    if (!v.IsString()) {
      return invalidType(name, "a string");
    }
    out.model = json::view(v);
    if (out.model.empty()) {
      return invalidValue(name, "model must not be empty");
    }
    return std::nullopt;
  }
  if (name == "input") {
    return checkInput(v, out.inputs);
  }
  if (name == "dimensions") {
    if (auto err = checkPositiveInt32(name, v)) {
      return err;
    }
    out.dimensions = v.GetInt();
    return std::nullopt;
  }
  if (name == "encoding_format") {
    if (!v.IsString()) {
      return invalidType(name, "a string");
    }
    const std::string_view format = json::view(v);
    if (format != "float" && format != "base64") {
      return invalidValue(name, "encoding_format must be \"float\" or \"base64\"");
    }
    out.base64 = format == "base64";
    return std::nullopt;
  }
  if (name == "user") {
    return v.IsString() ? std::nullopt : std::optional(invalidType(name, "a string"));
  }
  return decodeOwnField(name, v, out.tags, out.dryrun, out.cache);
}

bool isKnown(std::string_view name) {
  return std::find(kForwarded.begin(), kForwarded.end(), name) != kForwarded.end() ||
         std::find(kOwn.begin(), kOwn.end(), name) != kOwn.end();
}

}  // namespace

bool isForwardedEmbeddingField(std::string_view name) {
  return std::find(kForwarded.begin(), kForwarded.end(), name) != kForwarded.end();
}

Result<EmbeddingRequest> decodeEmbeddingRequest(std::string& body) {
  EmbeddingRequest req;
  auto unknown = decodeObjectBody(
      req.body, body, isKnown,
      [&req](std::string_view name, const rapidjson::Value& v) { return apply(name, v, req); });
  if (!unknown) {
    return std::move(unknown).error();
  }
  if (req.model.empty()) {
    return missingParameter("model");
  }
  if (req.inputs == 0) {
    return missingParameter("input");
  }
  if (auto err = unknown->refusal()) {
    return std::move(*err);
  }
  req.unprefixed = !std::string_view(req.model).starts_with(kEmbeddingModelPrefix);
  req.model_id = req.unprefixed ? req.model : req.model.substr(kEmbeddingModelPrefix.size());
  return req;
}

}  // namespace tollgate::openai
