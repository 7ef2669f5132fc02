#include "openai/transcription_request.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "rejected.hpp"

namespace tollgate::openai {
namespace {

constexpr std::string_view kBoundary = "tollgate-form-7MA4YWxkTrZu0gW";
const std::string kContentType = "multipart/form-data; boundary=" + std::string(kBoundary);

/// A short RIFF header and a few samples; any bytes would do, CRLFs and dashes included.
const std::string kAudio =
    std::string("RIFF\x24\0\0\0WAVE", 12) + "\r\n--not-a-boundary\r\n" + std::string("\x00\x01", 2);

struct Part {
  std::string name;
  std::string value;
  std::optional<std::string> filename = std::nullopt;
  std::string content_type = "";
};

Part file(std::string bytes = kAudio) {
  return Part{"file", std::move(bytes), "speech.wav", "audio/wav"};
}

/// A multipart/form-data body of `parts`, delimited by kBoundary.
std::string form(const std::vector<Part>& parts) {
  std::string out;
  for (const Part& p : parts) {
    out += "--" + std::string(kBoundary) + "\r\n";
    out += "Content-Disposition: form-data; name=\"" + p.name + "\"";
    if (p.filename) {
      out += "; filename=\"" + *p.filename + "\"";
    }
    out += "\r\n";
    if (!p.content_type.empty()) {
      out += "Content-Type: " + p.content_type + "\r\n";
    }
    out += "\r\n" + p.value + "\r\n";
  }
  return out + "--" + std::string(kBoundary) + "--\r\n";
}

/// Where the body is spooled: in memory, or (with a 16-byte memory limit) in a temporary file.
enum class Storage { Memory, File };

std::string_view nameOf(Storage s) { return s == Storage::Memory ? "memory" : "file"; }

Spool spool(std::string_view body, Storage storage) {
  Spool s;
  if (storage == Storage::File) {
    s.limitMemory(16);
  }
  EXPECT_TRUE(s.append(body));
  EXPECT_EQ(s.inFile(), storage == Storage::File);
  return s;
}

constexpr Storage kStorages[] = {Storage::Memory, Storage::File};

/// The bytes of `req`'s file, read back from its spool.
std::string fileBytes(const TranscriptionRequest& req) {
  std::string out(req.file.size, '\0');
  const auto n = req.body->read(req.file.offset, out);
  EXPECT_TRUE(n.ok());
  EXPECT_EQ(n.ok() ? *n : 0, req.file.size);
  return out;
}

using Fields = std::vector<std::pair<std::string, std::string>>;

TEST(TranscriptionRequest, AFullForm) {
  const std::string body = form({
      {"model", "whisper_1"},
      {"language", "en"},
      {"prompt", "Tollgate, Envoy, DuckDB"},
      file(),
      {"response_format", "verbose_json"},
      {"temperature", "0.5"},
      {"include[]", "logprobs"},
      {"timestamp_granularities[]", "word"},
      {"include[]", "other"},
      {"timestamp_granularities[]", "segment"},
      {"chunking_strategy", "auto"},
      {"known_speaker_names[]", "alice"},
      {"stream", "false"},
      {"tollgate::tags", R"({"feature":"notes"})"},
      {"tollgate::dryrun", "true"},
  });
  for (const Storage storage : kStorages) {
    SCOPED_TRACE(nameOf(storage));
    const Spool s = spool(body, storage);
    const auto r = decodeTranscriptionRequest(s, kContentType);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->model, "whisper_1");
    EXPECT_EQ(r->body, &s);
    EXPECT_EQ(r->response_format, "verbose_json");
    EXPECT_TRUE(r->dryrun);
    EXPECT_EQ(r->tags, (Tags{{"feature", "notes"}}));
    EXPECT_EQ(r->fields, (Fields{{"language", "en"},
                                 {"prompt", "Tollgate, Envoy, DuckDB"},
                                 {"response_format", "verbose_json"},
                                 {"temperature", "0.5"},
                                 {"include[]", "logprobs"},
                                 {"timestamp_granularities[]", "word"},
                                 {"include[]", "other"},
                                 {"timestamp_granularities[]", "segment"},
                                 {"chunking_strategy", "auto"},
                                 {"known_speaker_names[]", "alice"}}));
    EXPECT_EQ(r->file.filename, "speech.wav");
    EXPECT_EQ(r->file.content_type, "audio/wav");
    EXPECT_EQ(r->file.size, kAudio.size());
    EXPECT_EQ(body.substr(r->file.offset, r->file.size), kAudio);
    // The part's content starts right after the blank line that ends its headers.
    const std::size_t head = body.find("filename=\"speech.wav\"");
    ASSERT_NE(head, std::string::npos);
    EXPECT_EQ(r->file.offset, body.find("\r\n\r\n", head) + 4);
    EXPECT_EQ(fileBytes(*r), kAudio);
  }
}

TEST(TranscriptionRequest, TheLeastForm) {
  const std::string body = form({file(), {"model", "m"}});
  for (const Storage storage : kStorages) {
    SCOPED_TRACE(nameOf(storage));
    const Spool s = spool(body, storage);
    const auto r = decodeTranscriptionRequest(s, kContentType);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->model, "m");
    EXPECT_EQ(r->response_format, "json");
    EXPECT_FALSE(r->dryrun);
    EXPECT_TRUE(r->tags.empty());
    EXPECT_TRUE(r->fields.empty());
    EXPECT_EQ(fileBytes(*r), kAudio);
  }
}

TEST(TranscriptionRequest, FileDefaults) {
  const std::string body = form({{"file", "abc"}, {"model", "m"}});
  const Spool s = spool(body, Storage::Memory);
  const auto r = decodeTranscriptionRequest(s, kContentType);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->file.filename, "audio");
  EXPECT_EQ(r->file.content_type, "application/octet-stream");
  EXPECT_EQ(fileBytes(*r), "abc");
}

TEST(TranscriptionRequest, ALargeFileAcrossReadsAndTheMemoryLimit) {
  std::string audio;
  for (int i = 0; i < 300'000; ++i) {
    audio += static_cast<char>(i * 7 % 251);
  }
  const std::string body = form({{"model", "m"}, file(audio), {"language", "de"}});
  for (const Storage storage : kStorages) {
    SCOPED_TRACE(nameOf(storage));
    const Spool s = spool(body, storage);
    const auto r = decodeTranscriptionRequest(s, kContentType);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ(r->file.size, audio.size());
    EXPECT_EQ(body.substr(r->file.offset, r->file.size), audio);
    EXPECT_EQ(fileBytes(*r), audio);
    EXPECT_EQ(r->fields, (Fields{{"language", "de"}}));
  }
}

TEST(TranscriptionRequest, EachResponseFormat) {
  for (const char* format : {"json", "text", "srt", "verbose_json", "vtt"}) {
    const Spool s =
        spool(form({file(), {"model", "m"}, {"response_format", format}}), Storage::Memory);
    const auto r = decodeTranscriptionRequest(s, kContentType);
    ASSERT_TRUE(r.ok()) << format << ": " << r.error().message;
    EXPECT_EQ(r->response_format, format);
  }
}

TEST(TranscriptionRequest, TemperatureFromZeroToOne) {
  for (const char* t : {"0", "1", "0.5", "0.25", "1e-1", "1.0"}) {
    const Spool s = spool(form({file(), {"model", "m"}, {"temperature", t}}), Storage::Memory);
    const auto r = decodeTranscriptionRequest(s, kContentType);
    ASSERT_TRUE(r.ok()) << t << ": " << r.error().message;
    EXPECT_EQ(r->fields, (Fields{{"temperature", t}}));
  }
}

TEST(TranscriptionRequest, LanguageCodes) {
  for (const char* language : {"en", "de", "zh", "yo"}) {
    const Spool s = spool(form({file(), {"model", "m"}, {"language", language}}), Storage::Memory);
    const auto r = decodeTranscriptionRequest(s, kContentType);
    EXPECT_TRUE(r.ok()) << language;
  }
}

TEST(TranscriptionRequest, DryrunFalse) {
  const Spool s =
      spool(form({file(), {"model", "m"}, {"tollgate::dryrun", "false"}}), Storage::Memory);
  const auto r = decodeTranscriptionRequest(s, kContentType);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->dryrun);
}

TEST(TranscriptionRequest, AFieldOf64KiBIsAccepted) {
  const std::string prompt(64 * 1024, 'p');
  const Spool s = spool(form({file(), {"model", "m"}, {"prompt", prompt}}), Storage::Memory);
  const auto r = decodeTranscriptionRequest(s, kContentType);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->fields, (Fields{{"prompt", prompt}}));
}

class RejectedTranscriptionRequests : public testing::TestWithParam<Rejected> {};

TEST_P(RejectedTranscriptionRequests, NameTheParameterWhereverTheBodyIs) {
  const Rejected& c = GetParam();
  for (const Storage storage : kStorages) {
    SCOPED_TRACE(nameOf(storage));
    const Spool s = spool(c.body, storage);
    const auto r =
        decodeTranscriptionRequest(s, c.content_type.empty() ? kContentType : c.content_type);
    ASSERT_FALSE(r.ok());
    expectRefusal(r.error(), c);
  }
}

/// A valid form with `extra` appended.
std::string with(std::vector<Part> extra) {
  std::vector<Part> parts{file(), {"model", "m"}};
  for (Part& p : extra) {
    parts.push_back(std::move(p));
  }
  return form(parts);
}

INSTANTIATE_TEST_SUITE_P(
    All, RejectedTranscriptionRequests,
    testing::Values(
        Rejected{"not_multipart", with({}), ErrorKind::InvalidMultipart, "", "application/json"},
        Rejected{"no_boundary", with({}), ErrorKind::InvalidMultipart, "", "multipart/form-data"},
        Rejected{"other_boundary", with({}), ErrorKind::InvalidMultipart, "",
                 "multipart/form-data; boundary=other"},
        Rejected{"truncated", with({}).substr(0, 60), ErrorKind::InvalidMultipart, ""},
        Rejected{"missing_file", form({{"model", "m"}}), ErrorKind::MissingParameter, "file"},
        Rejected{"missing_file_and_model", form({{"language", "en"}}), ErrorKind::MissingParameter,
                 "file"},
        Rejected{"missing_model", form({file()}), ErrorKind::MissingParameter, "model"},
        Rejected{"empty_model", form({file(), {"model", ""}}), ErrorKind::InvalidValue, "model"},
        Rejected{"empty_file", form({file(""), {"model", "m"}}), ErrorKind::InvalidValue, "file"},
        Rejected{"two_files", with({file()}), ErrorKind::InvalidValue, "file"},
        Rejected{"unknown_field", with({{"temprature", "0"}}), ErrorKind::UnknownParameter,
                 "temprature"},
        Rejected{"user_field", with({{"user", "u"}}), ErrorKind::UnknownParameter, "user"},
        Rejected{"duplicate_model", with({{"model", "n"}}), ErrorKind::InvalidValue, "model"},
        Rejected{"duplicate_language", with({{"language", "en"}, {"language", "de"}}),
                 ErrorKind::InvalidValue, "language"},
        Rejected{"duplicate_tags", with({{"tollgate::tags", "{}"}, {"tollgate::tags", "{}"}}),
                 ErrorKind::InvalidValue, "tollgate::tags"},
        Rejected{"language_upper", with({{"language", "EN"}}), ErrorKind::InvalidValue, "language"},
        Rejected{"language_three_letters", with({{"language", "eng"}}), ErrorKind::InvalidValue,
                 "language"},
        Rejected{"language_not_a_code", with({{"language", "xx"}}), ErrorKind::InvalidValue,
                 "language"},
        Rejected{"language_empty", with({{"language", ""}}), ErrorKind::InvalidValue, "language"},
        Rejected{"response_format_xml", with({{"response_format", "xml"}}), ErrorKind::InvalidValue,
                 "response_format"},
        Rejected{"response_format_upper", with({{"response_format", "JSON"}}),
                 ErrorKind::InvalidValue, "response_format"},
        Rejected{"response_format_empty", with({{"response_format", ""}}), ErrorKind::InvalidValue,
                 "response_format"},
        Rejected{"temperature_above_one", with({{"temperature", "1.5"}}), ErrorKind::InvalidValue,
                 "temperature"},
        Rejected{"temperature_negative", with({{"temperature", "-0.1"}}), ErrorKind::InvalidValue,
                 "temperature"},
        Rejected{"temperature_word", with({{"temperature", "abc"}}), ErrorKind::InvalidType,
                 "temperature"},
        Rejected{"temperature_nan", with({{"temperature", "nan"}}), ErrorKind::InvalidType,
                 "temperature"},
        Rejected{"temperature_inf", with({{"temperature", "inf"}}), ErrorKind::InvalidType,
                 "temperature"},
        Rejected{"temperature_trailing", with({{"temperature", "0.5x"}}), ErrorKind::InvalidType,
                 "temperature"},
        Rejected{"temperature_empty", with({{"temperature", ""}}), ErrorKind::InvalidType,
                 "temperature"},
        Rejected{"stream_true", with({{"stream", "true"}}), ErrorKind::InvalidValue, "stream"},
        Rejected{"stream_word", with({{"stream", "yes"}}), ErrorKind::InvalidType, "stream"},
        Rejected{"tags_not_json", with({{"tollgate::tags", "feature=notes"}}),
                 ErrorKind::InvalidTags, "tollgate::tags"},
        Rejected{"tags_array", with({{"tollgate::tags", R"(["a"])"}}), ErrorKind::InvalidTags,
                 "tollgate::tags"},
        Rejected{"tag_value_number", with({{"tollgate::tags", R"({"k":1})"}}),
                 ErrorKind::InvalidTags, "tollgate::tags.k"},
        Rejected{"dryrun_word", with({{"tollgate::dryrun", "yes"}}), ErrorKind::InvalidType,
                 "tollgate::dryrun"},
        Rejected{"dryrun_upper", with({{"tollgate::dryrun", "TRUE"}}), ErrorKind::InvalidType,
                 "tollgate::dryrun"},
        Rejected{"field_70_kib", with({{"prompt", std::string(70 * 1024, 'p')}}),
                 ErrorKind::InvalidValue, "prompt"},
        Rejected{"field_64_kib_and_one", with({{"prompt", std::string(64 * 1024 + 1, 'p')}}),
                 ErrorKind::InvalidValue, "prompt"},
        Rejected{"prompt_not_utf8", with({{"prompt", "caf\xe9"}}), ErrorKind::InvalidValue,
                 "prompt"}),
    [](const testing::TestParamInfo<Rejected>& info) { return info.param.name; });

TEST(TranscriptionRequest, RepeatedArrayFieldsAreAllowed) {
  const Spool s =
      spool(with({{"include[]", "logprobs"}, {"include[]", "logprobs"}}), Storage::Memory);
  const auto r = decodeTranscriptionRequest(s, kContentType);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->fields, (Fields{{"include[]", "logprobs"}, {"include[]", "logprobs"}}));
}

TEST(TranscriptionContentType, ByResponseFormat) {
  EXPECT_EQ(transcriptionContentType("json"), "application/json");
  EXPECT_EQ(transcriptionContentType("verbose_json"), "application/json");
  EXPECT_EQ(transcriptionContentType("text"), "text/plain; charset=utf-8");
  EXPECT_EQ(transcriptionContentType("srt"), "text/plain; charset=utf-8");
  EXPECT_EQ(transcriptionContentType("vtt"), "text/plain; charset=utf-8");
}

}  // namespace
}  // namespace tollgate::openai
