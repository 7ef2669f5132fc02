// Embeddings through Gemini: one input with `embedContent`, several with `batchEmbedContents`.
// The answer is rewritten into OpenAI's embedding list, then finished as every list is
// (openai/embedding_response.hpp: the client's encoding, index order, usage and cost).
#include <rapidjson/document.h>

#include <algorithm>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/embedding_response.hpp"
#include "openai/fields.hpp"
#include "providers/gemini/gemini.hpp"
#include "providers/wire.hpp"

namespace tollgate::providers::gemini {
namespace {

using rapidjson::Value;

/// One EmbedContentRequest for `text`.
void embedRequest(json::Writer& w, const config::Provider& provider, const Value& text,
                  std::optional<int> dimensions) {
  w.field("model", "models/" + provider.model);
  w.key("content");
  w.startObject();
  w.key("parts");
  w.startArray();
  w.startObject();
  w.key("text");
  w.value(text);
  w.endObject();
  w.endArray();
  w.endObject();
  if (dimensions) {
    w.field("outputDimensionality", *dimensions);
  }
}

/// Writes one `{"index":i,"embedding":values}` item of our list.
std::optional<Error> listItem(json::Writer& w, const Value* embedding, std::size_t index) {
  const Value* values =
      embedding != nullptr && embedding->IsObject() ? json::member(*embedding, "values") : nullptr;
  if (values == nullptr || !values->IsArray()) {
    return malformedAnswer("an embedding without values");
  }
  w.startObject();
  w.field("object", "embedding");
  w.field("index", static_cast<std::int64_t>(index));
  w.key("embedding");
  w.value(*values);
  w.endObject();
  return std::nullopt;
}

class EmbeddingExchange final : public Exchange {
 public:
  EmbeddingExchange(const openai::EmbeddingRequest& request, const config::Provider& provider)
      : request_(request), provider_(provider) {}

  Result<UpstreamRequest> request() override {
    const Value* input = json::member(request_.body, "input");
    std::vector<const Value*> texts;
    if (input != nullptr && input->IsString()) {
      texts.push_back(input);
    } else if (input != nullptr && input->IsArray()) {
      for (const Value& v : input->GetArray()) {
        texts.push_back(&v);
      }
    }
    if (texts.empty() ||
        std::any_of(texts.begin(), texts.end(), [](const Value* v) { return !v->IsString(); })) {
      return openai::invalidValue(
          "input", "a Gemini embedding model takes text inputs only, not token arrays");
    }
    batch_ = input->IsArray();
    json::Writer w;
    w.startObject();
    if (!batch_) {
      embedRequest(w, provider_, *texts[0], request_.dimensions);
    } else {
      w.key("requests");
      w.startArray();
      for (const Value* text : texts) {
        w.startObject();
        embedRequest(w, provider_, *text, request_.dimensions);
        w.endObject();
      }
      w.endArray();
    }
    w.endObject();
    UpstreamRequest r;
    r.path = modelPath(provider_, batch_ ? "batchEmbedContents" : "embedContent");
    r.body = w.take();
    r.headers.emplace_back("Accept", "application/json");
    withKey(r, provider_);
    return r;
  }

  Result<std::string> completion(std::string& body) override {
    rapidjson::Document doc;
    if (json::parseInPlace(doc, body) || !doc.IsObject()) {
      return malformedAnswer("a body that is not a JSON object");
    }
    json::Writer w;
    w.startObject();
    w.field("object", "list");
    w.key("data");
    w.startArray();
    if (batch_) {
      const Value* list = json::member(doc, "embeddings");
      if (list == nullptr || !list->IsArray()) {
        return malformedAnswer("a batch answer without embeddings");
      }
      for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
        if (auto e = listItem(w, &(*list)[i], i)) {
          return std::move(*e);
        }
      }
    } else if (auto e = listItem(w, json::member(doc, "embedding"), 0)) {
      return std::move(*e);
    }
    w.endArray();
    // Gemini reports no tokens for most embedding models: the charge is then estimated.
    const Value* metadata = json::member(doc, "usageMetadata");
    const auto tokens = metadata != nullptr && metadata->IsObject()
                            ? json::countMember(*metadata, "promptTokenCount")
                            : std::nullopt;
    if (tokens) {
      w.key("usage");
      w.startObject();
      w.field("prompt_tokens", *tokens);
      w.field("total_tokens", *tokens);
      w.endObject();
    }
    w.endObject();
    std::string list = w.take();
    return openai::rewriteEmbeddingList(
        list,
        openai::EmbeddingMeta{request_.model, request_.base64, request_.pricing, request_.inputs},
        usage_);
  }

  Result<bool> event(std::string_view, std::string&, std::string&) override {
    return Error{ErrorKind::Internal, "embeddings are not streamed", ""};
  }

  Error error(int status, const std::string& body) override { return translateError(status, body); }

 private:
  const openai::EmbeddingRequest& request_;
  const config::Provider& provider_;
  bool batch_ = false;
};

}  // namespace

std::unique_ptr<Exchange> embedding(const openai::EmbeddingRequest& request,
                                    const config::Provider& provider) {
  return std::make_unique<EmbeddingExchange>(request, provider);
}

}  // namespace tollgate::providers::gemini
