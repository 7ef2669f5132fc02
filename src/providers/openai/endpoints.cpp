#include "providers/openai/endpoints.hpp"

#include <cmath>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "openai/embedding_response.hpp"
#include "openai/rerank_response.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers {
namespace {

constexpr std::int64_t kMsPerSecond = 1000;

UpstreamRequest jsonRequest(const config::Provider& provider, std::string_view endpoint,
                            std::string body) {
  UpstreamRequest r;
  r.path = provider.api_base.path + std::string(endpoint);
  r.body = std::move(body);
  r.headers.emplace_back("Accept", "application/json");
  if (!provider.api_key.empty()) {
    r.headers.emplace_back("Authorization", "Bearer " + provider.api_key);
  }
  return r;
}

/// What every exchange here shares: whole answers only, errors translated as for chat.
class WholeExchange : public Exchange {
 public:
  Result<bool> event(std::string_view, std::string&, std::string&) override {
    return Error{ErrorKind::Internal, "this endpoint is not streamed", ""};
  }
  Error error(int status, const std::string& body) override {
    return translateUpstreamError(status, body);
  }
};

class EmbeddingExchange final : public WholeExchange {
 public:
  EmbeddingExchange(const openai::EmbeddingRequest& request, const config::Provider& provider)
      : request_(request), provider_(provider) {}

  Result<UpstreamRequest> request() override {
    return jsonRequest(provider_, "/embeddings", buildEmbeddingBody(request_, provider_));
  }

  Result<std::string> completion(std::string& body) override {
    return openai::rewriteEmbeddingList(
        body,
        openai::EmbeddingMeta{request_.model, request_.base64, request_.pricing, request_.inputs},
        usage_);
  }

 private:
  const openai::EmbeddingRequest& request_;
  const config::Provider& provider_;
};

class RerankExchange final : public WholeExchange {
 public:
  RerankExchange(const openai::RerankRequest& request, const config::Provider& provider)
      : request_(request), provider_(provider) {}

  Result<UpstreamRequest> request() override {
    return jsonRequest(provider_, "/rerank", buildRerankBody(request_, provider_));
  }

  Result<std::string> completion(std::string& body) override {
    return openai::rewriteRerank(body, request_, request_.pricing, usage_);
  }

 private:
  const openai::RerankRequest& request_;
  const config::Provider& provider_;
};

/// One form field of a multipart body.
void appendField(std::string& out, const std::string& boundary, std::string_view name,
                 std::string_view value) {
  out.append("--").append(boundary).append("\r\nContent-Disposition: form-data; name=\"");
  out.append(name).append("\"\r\n\r\n").append(value).append("\r\n");
}

/// `s` as a quoted-string parameter value: quotes, backslashes and line breaks cannot end it.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
    }
    out += (c == '\r' || c == '\n') ? ' ' : c;
  }
  return out + "\"";
}

class TranscriptionExchange final : public WholeExchange {
 public:
  TranscriptionExchange(const openai::TranscriptionRequest& request,
                        const config::Provider& provider)
      : request_(request), provider_(provider) {}

  Result<UpstreamRequest> request() override {
    // Unguessable: a client that could work the boundary out could end its file or a field's
    // value with it and add parts of its own (another model, say) to what the upstream reads.
    constexpr std::size_t kBoundaryBytes = 16;
    const std::string boundary = "tollgate-" + ids::unguessableHex(kBoundaryBytes);
    std::string head;
    appendField(head, boundary, "model", provider_.model);
    for (const auto& [name, value] : request_.fields) {
      appendField(head, boundary, name, value);
    }
    head.append("--").append(boundary).append("\r\nContent-Disposition: form-data; name=\"file\"");
    head.append("; filename=").append(quoted(request_.file.filename));
    head.append("\r\nContent-Type: ").append(safeMediaType(request_.file.content_type));
    head.append("\r\n\r\n");
    UpstreamRequest r = jsonRequest(provider_, "/audio/transcriptions", std::move(head));
    r.content_type = "multipart/form-data; boundary=" + boundary;
    r.attachment = UpstreamRequest::Attachment{request_.body, request_.file.offset,
                                               request_.file.size, "\r\n--" + boundary + "--\r\n"};
    return r;
  }

  std::string_view contentType() const override {
    return openai::transcriptionContentType(request_.response_format);
  }

  Result<std::string> completion(std::string& body) override {
    if (contentType() == "application/json" && !readUsage(body)) {
      return Error{ErrorKind::UpstreamError, "the upstream's transcription is not a JSON object",
                   ""};
    }
    return std::move(body);
  }

 private:
  /// A client's part Content-Type goes into our request head: only a plain media type.
  static std::string safeMediaType(std::string_view type) {
    const bool plain = !type.empty() && type.size() <= 127 &&
                       type.find_first_of("\r\n\"\\") == std::string_view::npos;
    return plain ? std::string(type) : "application/octet-stream";
  }

  /// Seconds of audio (whisper's usage of type duration, or verbose_json's duration) or tokens
  /// (gpt-4o-transcribe's usage of type tokens), whichever the upstream reported. False when
  /// the body is not a JSON object.
  bool readUsage(const std::string& body) {
    rapidjson::Document doc;
    if (json::parse(doc, body) || !doc.IsObject()) {
      return false;
    }
    const rapidjson::Value* seconds = json::member(doc, "duration");
    if (const rapidjson::Value* u = json::member(doc, "usage"); u != nullptr && u->IsObject()) {
      if (json::stringMember(*u, "type") == "tokens") {
        // Counts that are not counts are missing, as for chat: never read as another number.
        const auto in = json::countMember(*u, "input_tokens");
        const auto out = json::countMember(*u, "output_tokens");
        if (in && out) {
          usage_ = usage::of(*in, *out);
        }
      }
      if (const rapidjson::Value* s = json::member(*u, "seconds")) {
        seconds = s;
      }
    }
    if (seconds != nullptr && seconds->IsNumber() && seconds->GetDouble() >= 0 &&
        seconds->GetDouble() < 1e9) {
      audio_ms_ = static_cast<std::int64_t>(std::ceil(seconds->GetDouble() * kMsPerSecond));
    }
    return true;
  }

  const openai::TranscriptionRequest& request_;
  const config::Provider& provider_;
};

}  // namespace

std::string buildEmbeddingBody(const openai::EmbeddingRequest& request,
                               const config::Provider& provider) {
  json::Writer w;
  w.startObject();
  w.field("model", provider.model);
  for (const auto& m : request.body.GetObject()) {
    if (!m.value.IsNull() && openai::isForwardedEmbeddingField(json::view(m.name))) {
      w.key(json::view(m.name));
      w.value(m.value);
    }
  }
  w.endObject();
  return w.take();
}

std::string buildRerankBody(const openai::RerankRequest& request,
                            const config::Provider& provider) {
  json::Writer w;
  w.startObject();
  w.field("model", provider.model);
  w.field("query", request.query);
  w.key("documents");
  w.value(request.body["documents"]);
  if (request.top_n) {
    w.field("top_n", *request.top_n);
  }
  // The texts are answered from the request: the upstream need not send them back.
  w.field("return_documents", false);
  if (const rapidjson::Value* chunks = json::member(request.body, "max_chunks_per_doc");
      chunks != nullptr && chunks->IsInt()) {
    w.field("max_chunks_per_doc", chunks->GetInt());
  }
  w.endObject();
  return w.take();
}

std::unique_ptr<Exchange> openAiEmbedding(const openai::EmbeddingRequest& request,
                                          const config::Provider& provider) {
  return std::make_unique<EmbeddingExchange>(request, provider);
}

std::unique_ptr<Exchange> openAiRerank(const openai::RerankRequest& request,
                                       const config::Provider& provider) {
  return std::make_unique<RerankExchange>(request, provider);
}

std::unique_ptr<Exchange> openAiTranscription(const openai::TranscriptionRequest& request,
                                              const config::Provider& provider) {
  return std::make_unique<TranscriptionExchange>(request, provider);
}

}  // namespace tollgate::providers
