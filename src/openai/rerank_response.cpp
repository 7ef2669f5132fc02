#include "openai/rerank_response.hpp"

#include <algorithm>

#include "core/ids.hpp"
#include "core/json.hpp"

namespace tollgate::openai {
namespace {

/// Cohere bills one search unit per query of up to this many documents.
constexpr std::int64_t kDocumentsPerSearchUnit = 100;

Error badUpstream(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

/// Tokens the upstream reported: usage.{prompt,total}_tokens (Jina, vLLM) or
/// meta.{billed_units,tokens}.input_tokens (Cohere).
std::optional<std::int64_t> reportedTokens(const rapidjson::Value& root) {
  if (const rapidjson::Value* u = json::member(root, "usage"); u != nullptr && u->IsObject()) {
    if (auto t = json::countMember(*u, "prompt_tokens")) {
      return t;
    }
    if (auto t = json::countMember(*u, "total_tokens")) {
      return t;
    }
  }
  if (const rapidjson::Value* m = json::member(root, "meta"); m != nullptr && m->IsObject()) {
    for (std::string_view part : {"tokens", "billed_units"}) {
      const rapidjson::Value* p = json::member(*m, part);
      if (p != nullptr && p->IsObject()) {
        if (auto t = json::countMember(*p, "input_tokens")) {
          return t;
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::string encodeRerank(const std::string& id, std::vector<RerankResult> results,
                         const RerankRequest& request, const std::optional<Usage>& usage,
                         const std::optional<money::Pricing>& pricing) {
  std::stable_sort(results.begin(), results.end(), [](const auto& a, const auto& b) {
    return a.relevance_score > b.relevance_score;
  });
  if (request.top_n && results.size() > static_cast<std::size_t>(*request.top_n)) {
    results.resize(static_cast<std::size_t>(*request.top_n));
  }
  json::Writer w;
  w.startObject();
  w.field("id", id);
  w.key("results");
  w.startArray();
  for (const RerankResult& r : results) {
    w.startObject();
    w.field("index", r.index);
    w.field("relevance_score", r.relevance_score);
    if (request.return_documents) {
      w.key("document");
      w.startObject();
      w.field("text", request.texts[static_cast<std::size_t>(r.index)]);
      w.endObject();
    }
    w.endObject();
  }
  w.endArray();
  w.key("meta");
  w.startObject();
  w.key("api_version");
  w.startObject();
  w.field("version", "2");
  w.endObject();
  const auto documents = static_cast<std::int64_t>(request.texts.size());
  w.key("billed_units");
  w.startObject();
  w.field("search_units", (documents + kDocumentsPerSearchUnit - 1) / kDocumentsPerSearchUnit);
  w.endObject();
  if (usage) {
    w.key("tokens");
    w.startObject();
    w.field("input_tokens", usage->prompt_tokens);
    w.endObject();
    if (pricing) {
      w.key(kCostMember);
      w.rawNumber(costText(*pricing, *usage));
    }
  }
  w.endObject();
  w.endObject();
  return w.take();
}

Result<std::string> rewriteRerank(std::string& body, const RerankRequest& request,
                                  const std::optional<money::Pricing>& pricing,
                                  std::optional<Usage>& usage) {
  rapidjson::Document doc;
  if (json::parseInPlace(doc, body, json::Keys::AllowDuplicates) || !doc.IsObject()) {
    return badUpstream("a body that is not a JSON object");
  }
  const rapidjson::Value* items = json::member(doc, "results");
  if (items == nullptr || !items->IsArray()) {
    return badUpstream("a rerank answer without results");
  }
  std::vector<RerankResult> results;
  for (const rapidjson::Value& item : items->GetArray()) {
    const auto index = item.IsObject() ? json::intMember(item, "index") : std::nullopt;
    if (!index || *index < 0 || static_cast<std::size_t>(*index) >= request.texts.size()) {
      return badUpstream("a rerank result without a valid document index");
    }
    const rapidjson::Value* score = json::member(item, "relevance_score");
    score = score != nullptr ? score : json::member(item, "score");
    if (score == nullptr || !score->IsNumber()) {
      return badUpstream("a rerank result without a relevance score");
    }
    results.push_back(RerankResult{*index, score->GetDouble()});
  }
  if (const auto tokens = reportedTokens(doc)) {
    usage = usage::of(*tokens, 0);
  }
  const std::string id(json::stringMember(doc, "id").value_or(""));
  return encodeRerank(id.empty() ? ids::uuidV7() : id, std::move(results), request, usage, pricing);
}

}  // namespace tollgate::openai
