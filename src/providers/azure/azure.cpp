#include "providers/azure/azure.hpp"

#include <rapidjson/document.h>

#include <memory>
#include <utility>

#include "core/json.hpp"
#include "core/text.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers::azure {
namespace {

using rapidjson::Value;

/// The filter's categories that filtered the prompt, e.g. "hate: high, violence: medium".
std::string filteredCategories(const Value& error) {
  const Value* inner = json::member(error, "innererror");
  const Value* result = inner != nullptr ? json::member(*inner, "content_filter_result") : nullptr;
  std::string out;
  if (result == nullptr || !result->IsObject()) {
    return out;
  }
  constexpr std::size_t kMaxCategories = 16;
  std::size_t seen = 0;
  for (const auto& category : result->GetObject()) {
    const Value& c = category.value;
    const Value* filtered = json::member(c, "filtered");
    if (!c.IsObject() || filtered == nullptr || !filtered->IsBool() || !filtered->GetBool() ||
        ++seen > kMaxCategories) {
      continue;
    }
    out += out.empty() ? "" : ", ";
    out += text::printable(json::view(category.name), 64);
    if (const auto severity = json::stringMember(c, "severity")) {
      out += ": " + text::printable(*severity, 32);
    }
  }
  return out;
}

/// One OpenAI-wire attempt, addressed to the deployment and authenticated with `api-key`.
class AzureExchange final : public Exchange {
 public:
  AzureExchange(std::unique_ptr<Exchange> inner, const config::Provider& provider)
      : inner_(std::move(inner)), provider_(provider) {}

  Result<UpstreamRequest> request() override {
    auto r = inner_->request();
    if (!r) {
      return r;
    }
    r->path = deploymentPath(provider_, r->path);
    std::erase_if(r->headers, [](const auto& h) { return h.first == "Authorization"; });
    if (!provider_.api_key.empty()) {
      r->headers.emplace_back("api-key", provider_.api_key);
    }
    return r;
  }

  Result<std::string> completion(std::string& body) override {
    auto c = inner_->completion(body);
    usage_ = inner_->usage();
    audio_ms_ = inner_->audioMs();
    return c;
  }

  Result<bool> event(std::string_view name, std::string& data, std::string& out) override {
    auto step = inner_->event(name, data, out);
    usage_ = inner_->usage();
    return step;
  }

  Error error(int status, const std::string& body) override { return translateError(status, body); }
  std::string_view contentType() const override { return inner_->contentType(); }
  std::optional<openai::Usage> interimUsage() const override { return inner_->interimUsage(); }
  std::string_view responseModel() const override { return inner_->responseModel(); }

 private:
  std::unique_ptr<Exchange> inner_;
  const config::Provider& provider_;
};

std::unique_ptr<Exchange> wrap(std::unique_ptr<Exchange> inner, const config::Provider& p) {
  return inner == nullptr ? nullptr : std::make_unique<AzureExchange>(std::move(inner), p);
}

class AzureAdapter final : public Adapter {
 public:
  std::unique_ptr<Exchange> chat(const openai::ChatRequest& request,
                                 const config::Provider& provider,
                                 const openai::ResponseMeta& meta) const override {
    return wrap(openAiAdapter().chat(request, provider, meta), provider);
  }
  std::unique_ptr<Exchange> embed(const openai::EmbeddingRequest& request,
                                  const config::Provider& provider) const override {
    return wrap(openAiAdapter().embed(request, provider), provider);
  }
  std::unique_ptr<Exchange> transcribe(const openai::TranscriptionRequest& request,
                                       const config::Provider& provider) const override {
    return wrap(openAiAdapter().transcribe(request, provider), provider);
  }
};

}  // namespace

std::string deploymentPath(const config::Provider& provider, std::string_view path) {
  const std::string& base = provider.api_base.path;
  const std::string_view endpoint =
      path.starts_with(base) ? path.substr(base.size()) : std::string_view(path);
  return base + "/openai/deployments/" + text::percentEncode(provider.model) +
         std::string(endpoint) + "?api-version=" + text::percentEncode(provider.api_version);
}

Error translateError(int status, const std::string& body) {
  rapidjson::Document doc;
  if (status == 400 && !json::parse(doc, body)) {
    const Value* err = json::member(doc, "error");
    if (err != nullptr && err->IsObject() &&
        json::stringMember(*err, "code").value_or("") == "content_filter") {
      const std::string categories = filteredCategories(*err);
      return Error{ErrorKind::UpstreamInvalidRequest,
                   "the provider's content filter refused the prompt" +
                       (categories.empty() ? std::string() : " (" + categories + ")"),
                   ""};
    }
  }
  return translateUpstreamError(status, body);
}

const Adapter& azureAdapter() {
  static const AzureAdapter adapter;
  return adapter;
}

}  // namespace tollgate::providers::azure
