#include "openai/rerank_request.hpp"

#include <algorithm>
#include <array>

#include "core/json.hpp"

namespace tollgate::openai {
namespace {

constexpr std::size_t kMaxDocuments = 10'000;

constexpr std::array<std::string_view, 10> kKnown{"model",
                                                  "query",
                                                  "documents",
                                                  "top_n",
                                                  "return_documents",
                                                  "max_chunks_per_doc",
                                                  "tollgate::tags",
                                                  "tollgate::dryrun",
                                                  "tollgate::cache_options",
                                                  "tollgate::deny_unknown_fields"};

std::optional<Error> checkDocuments(const rapidjson::Value& v, RerankRequest& out) {
  if (!v.IsArray()) {
    return invalidType("documents", "an array of strings or of objects with a \"text\" string");
  }
  if (v.Size() > kMaxDocuments) {
    return invalidValue("documents",
                        "documents holds at most " + std::to_string(kMaxDocuments) + " items");
  }
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    const rapidjson::Value& d = v[i];
    const std::string where = "documents[" + std::to_string(i) + "]";
    if (d.IsString()) {
      out.texts.push_back(json::view(d));
      continue;
    }
    if (!d.IsObject()) {
      return invalidType(where, "a string or an object with a \"text\" string");
    }
    const rapidjson::Value* text = json::member(d, "text");
    if (text == nullptr) {
      return missingParameter(where + ".text");
    }
    if (!text->IsString()) {
      return invalidType(where + ".text", "a string");
    }
    out.texts.push_back(json::view(*text));
  }
  return std::nullopt;
}

std::optional<Error> apply(std::string_view name, const rapidjson::Value& v, RerankRequest& out) {
  if (name == "model" || name == "query") {
    if (!v.IsString()) {
      return invalidType(name, "a string");
    }
    if (v.GetStringLength() == 0) {
      return invalidValue(name, std::string(name) + " must not be empty");
    }
    if (name == "model") {
      out.model = json::view(v);
    } else {
      out.query = json::view(v);
    }
    return std::nullopt;
  }
  if (name == "documents") {
    return checkDocuments(v, out);
  }
  if (name == "top_n" || name == "max_chunks_per_doc") {
    if (auto err = checkPositiveInt32(name, v)) {
      return err;
    }
    if (name == "top_n") {
      out.top_n = v.GetInt();
    }
    return std::nullopt;
  }
  if (name == "return_documents") {
    if (!v.IsBool()) {
      return invalidType(name, "a boolean");
    }
    out.return_documents = v.GetBool();
    return std::nullopt;
  }
  return decodeOwnField(name, v, out.tags, out.dryrun, out.cache);
}

}  // namespace

Result<RerankRequest> decodeRerankRequest(std::string& body) {
  RerankRequest req;
  bool has_documents = false;
  const auto known = [](std::string_view name) {
    return std::find(kKnown.begin(), kKnown.end(), name) != kKnown.end();
  };
  auto unknown = decodeObjectBody(req.body, body, known,
                                  [&](std::string_view name, const rapidjson::Value& v) {
                                    has_documents = has_documents || name == "documents";
                                    return apply(name, v, req);
                                  });
  if (!unknown) {
    return std::move(unknown).error();
  }
  if (req.model.empty()) {
    return missingParameter("model");
  }
  if (req.query.empty()) {
    return missingParameter("query");
  }
  if (!has_documents) {
    return missingParameter("documents");
  }
  if (auto err = unknown->refusal()) {
    return std::move(*err);
  }
  return req;
}

}  // namespace tollgate::openai
