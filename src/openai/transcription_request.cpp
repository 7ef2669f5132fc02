#include "openai/transcription_request.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>

#include "core/json.hpp"
#include "core/language.hpp"
#include "core/text.hpp"
#include "http/multipart.hpp"

namespace tollgate::openai {
namespace {

constexpr std::size_t kMaxFieldBytes = 64 * 1024;
constexpr std::size_t kReadBytes = 64 * 1024;
constexpr std::array<std::string_view, 5> kFormats{"json", "text", "srt", "verbose_json", "vtt"};
/// OpenAI fields forwarded as they are; the ones ending in [] may repeat.
constexpr std::array<std::string_view, 9> kForwarded{"language",
                                                     "prompt",
                                                     "response_format",
                                                     "temperature",
                                                     "include[]",
                                                     "timestamp_granularities[]",
                                                     "chunking_strategy",
                                                     "known_speaker_names[]",
                                                     "known_speaker_references[]"};

/// Collects the form's parts as the multipart parser finds them.
class FormSink final : public http::MultipartParser::Sink {
 public:
  explicit FormSink(TranscriptionRequest& out) : out_(out) {}

  std::optional<Error> partBegin(const http::PartHead& head) override {
    name_ = head.name;
    value_.clear();
    if (name_ == "file") {
      if (has_file_) {
        return invalidValue("file", "the form holds more than one file part");
      }
      has_file_ = true;
      in_file_ = true;
      out_.file.filename = head.filename.value_or("audio");
      out_.file.content_type =
          head.content_type.empty() ? "application/octet-stream" : head.content_type;
      return std::nullopt;
    }
    in_file_ = false;
    const bool known = name_ == "model" || name_ == "stream" || name_ == "tollgate::tags" ||
                       name_ == "tollgate::dryrun" ||
                       std::find(kForwarded.begin(), kForwarded.end(), name_) != kForwarded.end();
    if (!known) {
      return Error{ErrorKind::UnknownParameter,
                   "unknown form field '" + text::printable(name_, 64) +
                       "'; the fields are file, model, language, prompt, response_format, "
                       "temperature, timestamp_granularities[], include[], chunking_strategy, "
                       "known_speaker_names[], known_speaker_references[], stream, "
                       "tollgate::tags and tollgate::dryrun",
                   text::printable(name_, 64)};
    }
    if (!name_.ends_with("[]") && std::find(seen_.begin(), seen_.end(), name_) != seen_.end()) {
      return invalidValue(name_, "the form holds the field " + name_ + " more than once");
    }
    seen_.push_back(name_);
    return std::nullopt;
  }

  std::optional<Error> partData(std::string_view data, std::size_t offset) override {
    if (in_file_) {
      if (out_.file.size == 0) {
        out_.file.offset = offset;
      }
      out_.file.size += data.size();
      return std::nullopt;
    }
    if (value_.size() + data.size() > kMaxFieldBytes) {
      return invalidValue(name_, "the form field " + name_ + " exceeds " +
                                     std::to_string(kMaxFieldBytes) + " bytes");
    }
    value_.append(data);
    return std::nullopt;
  }

  std::optional<Error> partEnd() override {
    if (in_file_) {
      return std::nullopt;
    }
    return field(name_, std::move(value_));
  }

  bool hasFile() const { return has_file_; }

 private:
  std::optional<Error> field(const std::string& name, std::string value) {
    if (name == "model") {
      if (value.empty()) {
        return invalidValue(name, "model must not be empty");
      }
      out_.model = std::move(value);
      return std::nullopt;
    }
    if (name == "stream") {
      if (value == "true") {
        return invalidValue(name, "streamed transcriptions are not supported; omit stream");
      }
      return value == "false" ? std::nullopt : std::optional(invalidType(name, "true or false"));
    }
    if (name == "tollgate::dryrun") {
      if (value != "true" && value != "false") {
        return invalidType(name, "true or false");
      }
      out_.dryrun = value == "true";
      return std::nullopt;
    }
    if (name == "tollgate::tags") {
      return tags(value);
    }
    if (auto err = check(name, value)) {
      return err;
    }
    out_.fields.emplace_back(name, std::move(value));
    return std::nullopt;
  }

  std::optional<Error> check(const std::string& name, const std::string& value) {
    if (name == "language" && !isIso639Code(value)) {
      return invalidValue(name, "language must be an ISO 639-1 code in lowercase, e.g. en or de");
    }
    if (name == "response_format") {
      if (std::find(kFormats.begin(), kFormats.end(), value) == kFormats.end()) {
        return invalidValue(name,
                            "response_format must be one of json, text, srt, verbose_json, vtt");
      }
      out_.response_format = value;
    }
    if (name == "temperature") {
      double t = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), t);
      if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(t)) {
        return invalidType(name, "a number");
      }
      if (t < 0 || t > 1) {
        return invalidValue(name, "temperature must be between 0 and 1");
      }
    }
    if (!text::isValidUtf8(value)) {
      return invalidValue(name, "the form field " + name + " is not valid UTF-8");
    }
    return std::nullopt;
  }

  std::optional<Error> tags(std::string& value) {
    rapidjson::Document doc;
    if (json::parse(doc, value)) {
      return Error{ErrorKind::InvalidTags,
                   "tollgate::tags must be a JSON object of strings, e.g. {\"feature\": \"notes\"}",
                   "tollgate::tags"};
    }
    return decodeTags(doc, out_.tags);
  }

  TranscriptionRequest& out_;
  std::string name_;
  std::string value_;
  std::vector<std::string> seen_;
  bool has_file_ = false;
  bool in_file_ = false;
};

}  // namespace

std::string_view transcriptionContentType(std::string_view response_format) {
  return response_format == "json" || response_format == "verbose_json"
             ? "application/json"
             : "text/plain; charset=utf-8";
}

Result<TranscriptionRequest> decodeTranscriptionRequest(const Spool& body,
                                                        std::string_view content_type) {
  auto boundary = http::multipartBoundary(content_type);
  if (!boundary) {
    return std::move(boundary).error();
  }
  TranscriptionRequest req;
  req.body = &body;
  FormSink sink(req);
  http::MultipartParser parser(std::move(boundary).value(), sink);
  std::string chunk(kReadBytes, '\0');
  for (std::size_t offset = 0; offset < body.size();) {
    auto n = body.read(offset, chunk);
    if (!n) {
      return std::move(n).error();
    }
    if (auto err = parser.feed(std::string_view(chunk.data(), *n))) {
      return std::move(*err);
    }
    offset += *n;
  }
  if (auto err = parser.finish()) {
    return std::move(*err);
  }
  if (!sink.hasFile()) {
    return missingParameter("file");
  }
  if (req.file.size == 0) {
    return invalidValue("file", "the file is empty");
  }
  if (req.model.empty()) {
    return missingParameter("model");
  }
  std::string start(std::min(kWavHeaderBytes, req.file.size), '\0');
  if (auto n = body.read(req.file.offset, start)) {
    start.resize(*n);
    req.wav = readWavHeader(start, req.file.size);
  }
  return req;
}

}  // namespace tollgate::openai
