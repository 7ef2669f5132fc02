#include "providers/dummy/endpoints.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <set>

#include "core/ids.hpp"
#include "core/json.hpp"
#include "core/text.hpp"
#include "core/wav.hpp"
#include "openai/embedding_response.hpp"
#include "openai/rerank_response.hpp"

namespace tollgate::providers {
namespace {

/// Dummy vector components are multiples of this: exact in float32 and short in decimal.
constexpr float kStep = 1.0F / 64;
/// Without a WAV header, audio is taken to be 128 kbit/s.
constexpr std::int64_t kAssumedBytesPerSecond = 16'000;
constexpr std::int64_t kMsPerSecond = 1000;

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      word += text::lowerAscii(c);
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) {
    out.push_back(std::move(word));
  }
  return out;
}

/// An answer prepared in process, sent back by the dummy's loopback transport.
class PreparedExchange final : public Exchange {
 public:
  PreparedExchange(std::string body, std::string content_type, std::optional<openai::Usage> usage,
                   std::int64_t audio_ms)
      : body_(std::move(body)), content_type_(std::move(content_type)) {
    usage_ = usage;
    audio_ms_ = audio_ms;
  }

  Result<UpstreamRequest> request() override {
    UpstreamRequest r;
    r.content_type = content_type_;
    r.body = std::move(body_);
    return r;
  }
  std::string_view contentType() const override { return content_type_; }
  Result<std::string> completion(std::string& body) override { return std::move(body); }
  Result<bool> event(std::string_view, std::string&, std::string&) override {
    return Error{ErrorKind::Internal, "this endpoint is not streamed", ""};
  }
  Error error(int status, const std::string&) override {
    return Error{ErrorKind::Internal, "the dummy provider failed with " + std::to_string(status),
                 ""};
  }

 private:
  std::string body_;
  std::string content_type_;
};

std::vector<float> embed(std::string_view text, int dimensions) {
  std::vector<float> v(static_cast<std::size_t>(dimensions), 0.0F);
  for (const std::string& w : words(text)) {
    const std::size_t h = std::hash<std::string>{}(w);
    v[h % v.size()] += (h >> 32 & 1) != 0 ? kStep : -kStep;
  }
  return v;
}

std::string transcript(const openai::TranscriptionRequest& request, std::int64_t& audio_ms) {
  char line[256];
  if (const auto& wav = request.wav) {
    audio_ms = wav->duration_ms;
    std::snprintf(line, sizeof(line),
                  "Audio of %.2f seconds: WAV, %u Hz, %u channel%s, %u-bit, %zu bytes.",
                  static_cast<double>(audio_ms) / kMsPerSecond, wav->sample_rate, wav->channels,
                  wav->channels == 1 ? "" : "s", wav->bits_per_sample, request.file.size);
  } else {
    audio_ms = static_cast<std::int64_t>(request.file.size) * kMsPerSecond / kAssumedBytesPerSecond;
    std::snprintf(line, sizeof(line), "Audio of %zu bytes (%s), not a WAV file.", request.file.size,
                  request.file.content_type.c_str());
  }
  return line;
}

/// A subtitle timestamp: 00:00:02,500 (srt) or 00:00:02.500 (vtt).
std::string timestamp(std::int64_t ms, char separator) {
  char out[32];
  std::snprintf(out, sizeof(out), "%02lld:%02lld:%02lld%c%03lld",
                static_cast<long long>(ms / 3'600'000), static_cast<long long>(ms / 60'000 % 60),
                static_cast<long long>(ms / 1000 % 60), separator,
                static_cast<long long>(ms % 1000));
  return out;
}

std::string transcriptionBody(const openai::TranscriptionRequest& request, const std::string& text,
                              std::int64_t audio_ms) {
  const std::string& format = request.response_format;
  const double seconds = static_cast<double>(audio_ms) / kMsPerSecond;
  if (format == "text") {
    return text + "\n";
  }
  if (format == "srt") {
    return "1\n" + timestamp(0, ',') + " --> " + timestamp(audio_ms, ',') + "\n" + text + "\n\n";
  }
  if (format == "vtt") {
    return "WEBVTT\n\n" + timestamp(0, '.') + " --> " + timestamp(audio_ms, '.') + "\n" + text +
           "\n\n";
  }
  json::Writer w;
  w.startObject();
  if (format == "verbose_json") {
    w.field("task", "transcribe");
    std::string language = "en";
    for (const auto& [name, value] : request.fields) {
      language = name == "language" ? value : language;
    }
    w.field("language", language);
    w.field("duration", seconds);
    w.field("text", text);
    w.key("segments");
    w.startArray();
    w.startObject();
    w.field("id", 0);
    w.field("seek", 0);
    w.field("start", 0.0);
    w.field("end", seconds);
    w.field("text", text);
    w.key("tokens");
    w.startArray();
    w.endArray();
    w.field("temperature", 0.0);
    w.field("avg_logprob", 0.0);
    w.field("compression_ratio", 1.0);
    w.field("no_speech_prob", 0.0);
    w.endObject();
    w.endArray();
  } else {
    w.field("text", text);
  }
  w.key("usage");
  w.startObject();
  w.field("type", "duration");
  w.field("seconds", static_cast<std::int64_t>((audio_ms + kMsPerSecond - 1) / kMsPerSecond));
  w.endObject();
  w.endObject();
  return w.take();
}

}  // namespace

std::unique_ptr<Exchange> dummyEmbedding(const openai::EmbeddingRequest& request) {
  const int dimensions = request.dimensions.value_or(kDummyDimensions);
  std::vector<std::vector<float>> vectors;
  std::int64_t tokens = 0;
  const rapidjson::Value& input = request.body["input"];  // Present: the decoder requires it.
  const auto add = [&](const rapidjson::Value& item) {
    const std::string text =
        item.IsString() ? std::string(json::view(item)) : json::serialize(item);
    tokens += item.IsArray() ? item.Size() : static_cast<std::int64_t>(words(text).size());
    vectors.push_back(embed(text, dimensions));
  };
  if (input.IsArray() && !input[0].IsNumber()) {
    for (const auto& item : input.GetArray()) {
      add(item);
    }
  } else {
    add(input);
  }
  const openai::Usage usage{tokens, 0, tokens};
  return std::make_unique<PreparedExchange>(
      openai::encodeEmbeddingList(
          vectors,
          openai::EmbeddingMeta{request.model, request.base64, request.pricing, vectors.size()},
          usage),
      "application/json", usage, 0);
}

std::unique_ptr<Exchange> dummyRerank(const openai::RerankRequest& request) {
  const std::vector<std::string> query = words(request.query);
  const std::set<std::string> wanted(query.begin(), query.end());
  std::vector<openai::RerankResult> results;
  std::int64_t tokens = static_cast<std::int64_t>(query.size());
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    const std::vector<std::string> doc = words(request.texts[i]);
    tokens += static_cast<std::int64_t>(doc.size());
    const std::set<std::string> have(doc.begin(), doc.end());
    const auto shared = std::count_if(wanted.begin(), wanted.end(),
                                      [&](const std::string& w) { return have.contains(w); });
    const double score =
        wanted.empty() ? 0.0 : static_cast<double>(shared) / static_cast<double>(wanted.size());
    results.push_back({static_cast<std::int64_t>(i), score});
  }
  const openai::Usage usage{tokens, 0, tokens};
  return std::make_unique<PreparedExchange>(
      openai::encodeRerank(ids::uuidV7(), std::move(results), request, usage, request.pricing),
      "application/json", usage, 0);
}

std::unique_ptr<Exchange> dummyTranscription(const openai::TranscriptionRequest& request) {
  std::int64_t audio_ms = 0;
  const std::string text = transcript(request, audio_ms);
  return std::make_unique<PreparedExchange>(
      transcriptionBody(request, text, audio_ms),
      std::string(openai::transcriptionContentType(request.response_format)), std::nullopt,
      audio_ms);
}

}  // namespace tollgate::providers
