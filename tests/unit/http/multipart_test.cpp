#include "http/multipart.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tollgate::http {
namespace {

using Limits = MultipartParser::Limits;

constexpr std::string_view kMalformedPrefix = "malformed multipart body: ";
constexpr std::string_view kBoundary = "----TollgateBoundary7MA4YWxkTrZu0gW";

/// One part as the sink saw it; `ranges` are the (offset, size) of each partData call.
struct Part {
  PartHead head;
  std::string content;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  bool ended = false;
};

/// Records every call and checks their order; can refuse a second part named `file`.
class Recorder final : public MultipartParser::Sink {
 public:
  std::optional<Error> partBegin(const PartHead& head) override {
    EXPECT_FALSE(open_) << "partBegin inside a part";
    if (refuse_duplicate_file && head.name == "file" && seen_.contains("file")) {
      return Error{ErrorKind::InvalidValue, "only one file may be uploaded", "file"};
    }
    seen_.insert(head.name);
    open_ = true;
    parts.push_back(Part{head, {}, {}, false});
    return std::nullopt;
  }

  std::optional<Error> partData(std::string_view data, std::size_t offset) override {
    EXPECT_TRUE(open_) << "partData outside a part";
    EXPECT_FALSE(data.empty()) << "empty partData";
    if (parts.empty()) {
      return std::nullopt;
    }
    ++data_calls;
    max_data = std::max(max_data, data.size());
    parts.back().content.append(data);
    parts.back().ranges.emplace_back(offset, data.size());
    if (refuse_data_after > 0 && parts.back().content.size() > refuse_data_after) {
      return Error{ErrorKind::PayloadTooLarge, "the file is too large", "file"};
    }
    return std::nullopt;
  }

  std::optional<Error> partEnd() override {
    EXPECT_TRUE(open_) << "partEnd outside a part";
    open_ = false;
    if (!parts.empty()) {
      parts.back().ended = true;
    }
    return std::nullopt;
  }

  std::vector<Part> parts;
  std::size_t max_data = 0;
  std::size_t data_calls = 0;
  bool refuse_duplicate_file = false;
  std::size_t refuse_data_after = 0;  ///< 0: never.

 private:
  bool open_ = false;
  std::set<std::string> seen_;
};

struct Outcome {
  std::vector<Part> parts;
  std::optional<Error> error;
  std::size_t max_data = 0;
  std::size_t data_calls = 0;
};

/// Parses `body` cut into pieces at the sorted positions `cuts`, then finishes.
Outcome parseCut(std::string_view body, const std::vector<std::size_t>& cuts,
                 Limits limits = Limits{}) {
  Recorder recorder;
  MultipartParser parser(std::string(kBoundary), recorder, limits);
  Outcome out;
  std::size_t from = 0;
  std::vector<std::size_t> ends = cuts;
  ends.push_back(body.size());
  for (const std::size_t to : ends) {
    out.error = parser.feed(body.substr(from, to - from));
    from = to;
    if (out.error) {
      break;
    }
  }
  if (!out.error) {
    out.error = parser.finish();
  }
  out.parts = std::move(recorder.parts);
  out.max_data = recorder.max_data;
  out.data_calls = recorder.data_calls;
  return out;
}

Outcome parseWhole(std::string_view body, Limits limits = Limits{}) {
  return parseCut(body, {}, limits);
}

/// Parses `body` fed `chunk` bytes at a time.
Outcome parseChunked(std::string_view body, std::size_t chunk, Limits limits = Limits{}) {
  std::vector<std::size_t> cuts;
  for (std::size_t at = chunk; at < body.size(); at += chunk) {
    cuts.push_back(at);
  }
  return parseCut(body, cuts, limits);
}

/// The `--boundary` line that opens a part, with its CRLF.
std::string dashBoundary() { return "--" + std::string(kBoundary) + "\r\n"; }
/// CRLF and the boundary delimiter that ends a part and opens the next.
std::string next() { return "\r\n--" + std::string(kBoundary) + "\r\n"; }
/// CRLF and the closing delimiter.
std::string close() { return "\r\n--" + std::string(kBoundary) + "--"; }

std::string field(std::string_view name) {
  return "Content-Disposition: form-data; name=\"" + std::string(name) + "\"\r\n\r\n";
}

/// Content that looks like delimiters without being one: `--boundary` not after CRLF, CRLFs,
/// a bare CR and LF before `--boundary`, and CRLF with all but the last byte of the boundary.
std::string trickyContent() {
  const std::string b(kBoundary);
  std::string s = "RIFF\r\n\r\nx--" + b + "--\n--" + b + "\r--" + b + "\r\n--" +
                  b.substr(0, b.size() - 1) + "X\r\n-\r\n--\r";
  s.push_back('\0');
  s += "\xff\xfe end\r\n\r";
  return s;
}

/// A form with a text field, a file with tricky content, an empty field and a field whose
/// content is only CRLF.
std::string sampleForm() {
  return dashBoundary() + field("model") + "whisper-1" + next() +
         "content-disposition: FORM-DATA; name=\"file\"; filename=\"a \\\"quoted\\\" name.wav\"\r\n"
         "X-Ignored: yes\r\n"
         "Content-Type: audio/wav\r\n"
         "\r\n" +
         trickyContent() + next() + "Content-Disposition: form-data; name=empty\r\n\r\n" + next() +
         field("crlf") + "\r\n" + close() + "\r\n";
}

/// Each part's content slices back out of `body` from its reported ranges, which are contiguous.
void expectRangesReproduceContent(std::string_view body, const std::vector<Part>& parts) {
  for (const Part& part : parts) {
    std::string sliced;
    for (std::size_t i = 0; i < part.ranges.size(); ++i) {
      const auto [offset, size] = part.ranges[i];
      ASSERT_LE(offset + size, body.size());
      if (i > 0) {
        EXPECT_EQ(offset, part.ranges[i - 1].first + part.ranges[i - 1].second)
            << "gap in part " << part.head.name;
      }
      sliced.append(body.substr(offset, size));
    }
    EXPECT_EQ(sliced, part.content) << part.head.name;
  }
}

/// The part as (head, content, first offset): what must not depend on how the body was split.
struct Summary {
  std::string name;
  std::optional<std::string> filename;
  std::string content_type;
  std::string content;
  std::size_t offset;
  bool ended;
  bool operator==(const Summary&) const = default;
};

std::vector<Summary> summarize(const std::vector<Part>& parts) {
  std::vector<Summary> out;
  for (const Part& p : parts) {
    out.push_back(Summary{p.head.name, p.head.filename, p.head.content_type, p.content,
                          p.ranges.empty() ? SIZE_MAX : p.ranges.front().first, p.ended});
  }
  return out;
}

void expectMalformed(const std::optional<Error>& error, std::string_view fragment) {
  ASSERT_TRUE(error.has_value()) << "expected an error with: " << fragment;
  EXPECT_EQ(error->kind, ErrorKind::InvalidMultipart);
  EXPECT_EQ(error->param, "");
  EXPECT_TRUE(error->message.starts_with(kMalformedPrefix)) << error->message;
  EXPECT_NE(error->message.find(fragment), std::string::npos) << error->message;
}

// ---- multipartBoundary ----

TEST(MultipartBoundary, ReadsUnquotedAndQuotedBoundaries) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"multipart/form-data; boundary=abc", "abc"},
      {"multipart/form-data;boundary=abc", "abc"},
      {"MULTIPART/Form-Data; BOUNDARY=abc", "abc"},
      {"multipart/form-data; boundary=\"abc\"", "abc"},
      {"multipart/form-data; boundary=\"a b'()+_,-./:=?c\"", "a b'()+_,-./:=?c"},
      {"multipart/form-data; charset=utf-8; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
       "----WebKitFormBoundary7MA4YWxkTrZu0gW"},
      {"multipart/form-data; boundary=\"x\" ; charset=utf-8", "x"},
      {"multipart/form-data; boundary=\"a\\=b\"", "a=b"},
  };
  for (const auto& [content_type, boundary] : cases) {
    const Result<std::string> got = multipartBoundary(content_type);
    ASSERT_TRUE(got.ok()) << content_type << ": " << got.error().message;
    EXPECT_EQ(*got, boundary) << content_type;
  }
}

TEST(MultipartBoundary, AcceptsSeventyCharactersButNotSeventyOne) {
  const std::string seventy(70, 'a');
  const Result<std::string> ok = multipartBoundary("multipart/form-data; boundary=" + seventy);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, seventy);
  const Result<std::string> too_long =
      multipartBoundary("multipart/form-data; boundary=" + seventy + "a");
  ASSERT_FALSE(too_long.ok());
  EXPECT_NE(too_long.error().message.find("1 to 70"), std::string::npos);
}

TEST(MultipartBoundary, RefusesWrongTypesAndBadBoundaries) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"", "not multipart/form-data"},
      {"application/json", "not multipart/form-data"},
      {"multipart/mixed; boundary=abc", "not multipart/form-data"},
      {"multipart/form-datax; boundary=abc", "not multipart/form-data"},
      {"multipart; boundary=abc", "not multipart/form-data"},
      {"multipart/form-data", "no boundary"},
      {"multipart/form-data; charset=utf-8", "no boundary"},
      {"multipart/form-data; boundary=\"\"", "1 to 70"},
      {"multipart/form-data; boundary=\"a@b\"", "character"},
      {"multipart/form-data; boundary=a!b", "character"},
      {"multipart/form-data; boundary=\"a\tb\"", "character"},
      {"multipart/form-data; boundary=\"ends \"", "end in a space"},
      {"multipart/form-data; boundary", "malformed parameters"},
      {"multipart/form-data; boundary=", "malformed parameters"},
      {"multipart/form-data; boundary=\"abc", "malformed parameters"},
      {"multipart/form-data; boundary=a b", "malformed parameters"},
      {"multipart/form-data; boundary=a; boundary=b", "two boundary"},
  };
  for (const auto& [content_type, fragment] : cases) {
    const Result<std::string> got = multipartBoundary(content_type);
    ASSERT_FALSE(got.ok()) << content_type;
    EXPECT_EQ(got.error().kind, ErrorKind::InvalidMultipart) << content_type;
    EXPECT_EQ(got.error().param, "") << content_type;
    EXPECT_NE(got.error().message.find(fragment), std::string::npos)
        << content_type << ": " << got.error().message;
  }
}

// ---- MultipartParser: well-formed bodies ----

TEST(MultipartParser, ParsesFieldsAndAFile) {
  const std::string body = sampleForm();
  const Outcome out = parseWhole(body);
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.parts.size(), 4U);

  EXPECT_EQ(out.parts[0].head.name, "model");
  EXPECT_FALSE(out.parts[0].head.filename);
  EXPECT_EQ(out.parts[0].head.content_type, "");
  EXPECT_EQ(out.parts[0].content, "whisper-1");

  EXPECT_EQ(out.parts[1].head.name, "file");
  EXPECT_EQ(out.parts[1].head.filename, "a \"quoted\" name.wav");
  EXPECT_EQ(out.parts[1].head.content_type, "audio/wav");
  EXPECT_EQ(out.parts[1].content, trickyContent());

  EXPECT_EQ(out.parts[2].head.name, "empty");
  EXPECT_EQ(out.parts[2].content, "");
  EXPECT_TRUE(out.parts[2].ranges.empty());

  EXPECT_EQ(out.parts[3].head.name, "crlf");
  EXPECT_EQ(out.parts[3].content, "\r\n");

  for (const Part& p : out.parts) {
    EXPECT_TRUE(p.ended) << p.head.name;
  }
  expectRangesReproduceContent(body, out.parts);
  EXPECT_EQ(body.substr(out.parts[1].ranges.front().first, trickyContent().size()),
            trickyContent());
}

TEST(MultipartParser, IgnoresPreambleAndEpilogue) {
  const std::string b(kBoundary);
  const std::string body = "This is the preamble. --" + b + " is not a delimiter here.\r\n--" + b +
                           "\r\n" + field("a") + "1" + close() + "\r\nThe epilogue.\r\n--" + b +
                           "\r\nnot: a part\r\n";
  const Outcome out = parseWhole(body);
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.parts.size(), 1U);
  EXPECT_EQ(out.parts[0].content, "1");
  expectRangesReproduceContent(body, out.parts);
}

TEST(MultipartParser, AcceptsAPreambleOfExactlyTheLimit) {
  const std::string body =
      std::string(16, 'p') + "\r\n" + dashBoundary() + field("a") + "1" + close();
  const Outcome out = parseWhole(body, Limits{.max_preamble_bytes = 16});
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.parts.size(), 1U);
  EXPECT_EQ(out.parts[0].content, "1");
}

TEST(MultipartParser, AcceptsTransportPaddingAfterDelimiters) {
  const std::string b(kBoundary);
  const std::string body =
      "--" + b + " \t \r\n" + field("a") + "1\r\n--" + b + "\t\r\n" + field("b") + "2" + close();
  const Outcome out = parseWhole(body);
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.parts.size(), 2U);
  EXPECT_EQ(out.parts[0].content, "1");
  EXPECT_EQ(out.parts[1].content, "2");
}

TEST(MultipartParser, AcceptsABodyWithoutParts) {
  const Outcome out = parseWhole("--" + std::string(kBoundary) + "--\r\n");
  EXPECT_FALSE(out.error);
  EXPECT_TRUE(out.parts.empty());
}

TEST(MultipartParser, ReadsHeaderVariants) {
  const std::string body =
      dashBoundary() +
      "CONTENT-TYPE:text/plain; charset=utf-8\r\n"
      "Content-Disposition:form-data ;name=token-name;filename=plain.txt \r\n"
      "\r\n"
      "x" +
      next() +
      "Content-Disposition: form-data; name=\"f\"; filename=\"fallback.txt\"; "
      "filename*=utf-8'en'%E2%82%AC%20rates.txt\r\n\r\n"
      "y" +
      next() + "Content-Disposition: form-data; name=\"g\"; filename=\"\"\r\n\r\n" + close();
  const Outcome out = parseWhole(body);
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.parts.size(), 3U);
  EXPECT_EQ(out.parts[0].head.name, "token-name");
  EXPECT_EQ(out.parts[0].head.filename, "plain.txt");
  EXPECT_EQ(out.parts[0].head.content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(out.parts[1].head.name, "f");
  EXPECT_EQ(out.parts[1].head.filename, "\xe2\x82\xac rates.txt");
  EXPECT_EQ(out.parts[2].head.filename, "");
}

TEST(MultipartParser, EmitsContentAsItArrives) {
  Recorder recorder;
  MultipartParser parser(std::string(kBoundary), recorder);
  ASSERT_FALSE(parser.feed(dashBoundary() + field("file") + "hello"));
  ASSERT_EQ(recorder.parts.size(), 1U);
  EXPECT_EQ(recorder.parts[0].content, "hello");
  // A possible delimiter start is kept back until it is decided, and no longer.
  ASSERT_FALSE(parser.feed(" world\r\n--" + std::string(kBoundary.substr(0, 5))));
  EXPECT_EQ(recorder.parts[0].content, "hello world");
  ASSERT_FALSE(parser.feed("?"));
  EXPECT_EQ(recorder.parts[0].content,
            "hello world\r\n--" + std::string(kBoundary.substr(0, 5)) + "?");
  EXPECT_FALSE(recorder.parts[0].ended);
  ASSERT_FALSE(parser.feed(close()));
  EXPECT_TRUE(recorder.parts[0].ended);
  EXPECT_FALSE(parser.finish());
  EXPECT_FALSE(parser.finish()) << "finish() twice";
}

TEST(MultipartParser, AnySplitGivesTheSamePartsAndOffsets) {
  const std::string body =
      "preamble\r\n" + sampleForm().substr(0, sampleForm().size() - 2) + "\r\nepilogue";
  const Outcome whole = parseWhole(body);
  ASSERT_FALSE(whole.error) << whole.error->message;
  ASSERT_EQ(whole.parts.size(), 4U);
  expectRangesReproduceContent(body, whole.parts);
  const std::vector<Summary> expected = summarize(whole.parts);

  const Outcome bytewise = parseChunked(body, 1);
  ASSERT_FALSE(bytewise.error) << bytewise.error->message;
  EXPECT_EQ(summarize(bytewise.parts), expected);
  expectRangesReproduceContent(body, bytewise.parts);

  for (std::size_t cut = 0; cut <= body.size(); ++cut) {
    const Outcome two = parseCut(body, {cut});
    ASSERT_FALSE(two.error) << "cut at " << cut << ": " << two.error->message;
    ASSERT_EQ(summarize(two.parts), expected) << "cut at " << cut;
    expectRangesReproduceContent(body, two.parts);
  }
  for (std::size_t chunk = 2; chunk <= body.size(); ++chunk) {
    const Outcome chunked = parseChunked(body, chunk);
    ASSERT_FALSE(chunked.error) << "chunk " << chunk << ": " << chunked.error->message;
    ASSERT_EQ(summarize(chunked.parts), expected) << "chunk " << chunk;
    expectRangesReproduceContent(body, chunked.parts);
  }
}

TEST(MultipartParser, StreamsALargePartInPiecesNoLargerThanAChunk) {
  constexpr std::size_t kPartBytes = 5 * 1024 * 1024;
  constexpr std::size_t kChunk = 16 * 1024;
  const std::string b(kBoundary);
  // Pseudo-random bytes, with near-delimiters sprinkled in so that some chunks end inside one.
  std::string content;
  content.reserve(kPartBytes);
  std::uint32_t state = 12345;
  const std::string near = "\r\n--" + b.substr(0, b.size() - 1) + "!";
  while (content.size() < kPartBytes) {
    state = state * 1664525U + 1013904223U;
    if (state % 997 == 0) {
      content += near;
    } else {
      content.push_back(static_cast<char>(state >> 24));
    }
  }
  content.resize(kPartBytes);
  const std::string head = dashBoundary() +
                           "Content-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n"
                           "Content-Type: application/octet-stream\r\n\r\n";
  const std::string body = head + content + close() + "\r\n";

  const Outcome out = parseChunked(body, kChunk);
  ASSERT_FALSE(out.error) << out.error->message;
  ASSERT_EQ(out.parts.size(), 1U);
  EXPECT_TRUE(out.parts[0].content == content);
  EXPECT_EQ(out.parts[0].ranges.front().first, head.size());
  EXPECT_LE(out.max_data, kChunk + ("\r\n--" + b).size());
  EXPECT_GE(out.data_calls, kPartBytes / kChunk);
  expectRangesReproduceContent(body, out.parts);
}

// ---- MultipartParser: malformed bodies ----

struct MalformedCase {
  std::string_view what;
  std::string body;
  std::string_view fragment;
  Limits limits = Limits{};
};

std::vector<MalformedCase> malformedCases() {
  const std::string b(kBoundary);
  const std::string cd = "Content-Disposition: form-data; ";
  return {
      {"empty body", "", "truncated"},
      {"no delimiter", "just some text\r\n", "truncated"},
      {"no close delimiter", dashBoundary() + field("a") + "content", "truncated"},
      {"close delimiter without its dashes", dashBoundary() + field("a") + "1\r\n--" + b,
       "truncated"},
      {"truncated after a delimiter", dashBoundary() + field("a") + "1" + next(), "truncated"},
      {"truncated headers", dashBoundary() + cd + "name=\"a\"\r\n", "truncated"},
      {"truncated header line", dashBoundary() + "Content-Dispo", "truncated"},
      {"part without a name", dashBoundary() + cd + "filename=\"a.txt\"\r\n\r\n1" + close(),
       "a part has no name"},
      {"part with an empty name", dashBoundary() + cd + "name=\"\"\r\n\r\n1" + close(),
       "empty name"},
      {"part without Content-Disposition",
       dashBoundary() + "Content-Type: text/plain\r\n\r\n1" + close(), "no Content-Disposition"},
      {"part without headers", dashBoundary() + "\r\n1" + close(), "no Content-Disposition"},
      {"disposition not form-data",
       dashBoundary() + "Content-Disposition: attachment; name=\"a\"\r\n\r\n1" + close(),
       "not form-data"},
      {"two dispositions", dashBoundary() + cd + "name=a\r\n" + cd + "name=b\r\n\r\n1" + close(),
       "two Content-Disposition"},
      {"repeated name parameter", dashBoundary() + cd + "name=a; name=b\r\n\r\n1" + close(),
       "repeats the parameter name"},
      {"unterminated quoted name", dashBoundary() + cd + "name=\"a\r\n\r\n1" + close(),
       "malformed parameters"},
      {"trailing semicolon", dashBoundary() + cd + "name=a;\r\n\r\n1" + close(),
       "malformed parameters"},
      {"filename* not UTF-8",
       dashBoundary() + cd + "name=f; filename*=iso-8859-1''%A3.txt\r\n\r\n1" + close(),
       "filename*"},
      {"filename* invalid UTF-8",
       dashBoundary() + cd + "name=f; filename*=UTF-8''%FF.txt\r\n\r\n1" + close(), "filename*"},
      {"line folding",
       dashBoundary() + "Content-Disposition: form-data;\r\n name=\"a\"\r\n\r\n1" + close(),
       "folding"},
      {"header line without colon",
       dashBoundary() + field("a").insert(0, "garbage\r\n") + "1" + close(), "no colon"},
      {"header name with space",
       dashBoundary() + "Content-Disposition : form-data; name=a\r\n\r\n1" + close(),
       "not a token"},
      {"bare CR in a header line", dashBoundary() + "X-A: 1\r2\r\n" + field("a") + "1" + close(),
       "control character"},
      {"bare LF in a header line", dashBoundary() + "X-A: 1\n" + field("a") + "1" + close(),
       "control character"},
      {"header block too large",
       dashBoundary() + "X-Padding: " + std::string(100, 'x') + "\r\n" + field("a") + "1" + close(),
       "header block is larger than 64 bytes", Limits{.max_head_bytes = 64}},
      {"header line too large, unterminated",
       dashBoundary() + "X-Padding: " + std::string(1000, 'x'),
       "header block is larger than 64 bytes", Limits{.max_head_bytes = 64}},
      {"too many parts",
       dashBoundary() + field("a") + "1" + next() + field("b") + "2" + next() + field("c") + "3" +
           close(),
       "more than 2 parts", Limits{.max_parts = 2}},
      {"preamble too long",
       std::string(17, 'p') + "\r\n" + dashBoundary() + field("a") + "1" + close(),
       "preamble before the first boundary is longer than 16 bytes",
       Limits{.max_preamble_bytes = 16}},
      {"preamble too long, no delimiter", std::string(1000, 'p'),
       "preamble before the first boundary is longer than 16 bytes",
       Limits{.max_preamble_bytes = 16}},
      {"boundary followed by other bytes",
       dashBoundary() + field("a") + "1\r\n--" + b + "x\r\n" + close(),
       "followed by bytes other than CRLF"},
      {"first boundary followed by other bytes", "--" + b + "-x\r\n" + field("a") + close(),
       "followed by bytes other than CRLF"},
      {"padding before the closing dashes", dashBoundary() + field("a") + "1\r\n--" + b + " --",
       "followed by bytes other than CRLF"},
      {"CR without LF after a boundary", "--" + b + "\rx" + field("a") + close(),
       "followed by bytes other than CRLF"},
  };
}

TEST(MultipartParser, RefusesMalformedBodiesFedWholeOrBytewise) {
  for (const MalformedCase& c : malformedCases()) {
    SCOPED_TRACE(std::string(c.what));
    const Outcome whole = parseWhole(c.body, c.limits);
    expectMalformed(whole.error, c.fragment);
    const Outcome bytewise = parseChunked(c.body, 1, c.limits);
    expectMalformed(bytewise.error, c.fragment);
    if (whole.error && bytewise.error) {
      EXPECT_EQ(whole.error->message, bytewise.error->message);
    }
  }
}

TEST(MultipartParser, AcceptsExactlyTheHeadAndPartLimits) {
  const std::string body = dashBoundary() + field("a") + "1" + next() + field("b") + "2" + close();
  const std::size_t head_bytes = field("a").size();
  const Outcome at_limit = parseWhole(body, Limits{.max_parts = 2, .max_head_bytes = head_bytes});
  ASSERT_FALSE(at_limit.error) << at_limit.error->message;
  EXPECT_EQ(at_limit.parts.size(), 2U);
  const Outcome over = parseWhole(body, Limits{.max_parts = 2, .max_head_bytes = head_bytes - 1});
  expectMalformed(over.error, "header block is larger");
}

TEST(MultipartParser, KeepsReturningTheErrorAndRefusesDataAfterFinish) {
  Recorder recorder;
  MultipartParser parser(std::string(kBoundary), recorder);
  ASSERT_FALSE(parser.feed(dashBoundary() + field("a") + "partial"));
  const std::optional<Error> truncated = parser.finish();
  expectMalformed(truncated, "truncated");
  const std::optional<Error> again = parser.feed(close());
  ASSERT_TRUE(again);
  EXPECT_EQ(again->message, truncated->message);
  ASSERT_TRUE(parser.finish());
  EXPECT_EQ(parser.finish()->message, truncated->message);

  Recorder recorder2;
  MultipartParser done(std::string(kBoundary), recorder2);
  ASSERT_FALSE(done.feed(dashBoundary() + field("a") + "1" + close() + "epilogue"));
  ASSERT_FALSE(done.finish());
  expectMalformed(done.feed("more"), "after the end");
}

TEST(MultipartParser, ASinkErrorStopsTheParser) {
  Recorder recorder;
  recorder.refuse_duplicate_file = true;
  MultipartParser parser(std::string(kBoundary), recorder);
  const std::string cd = "Content-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n";
  const std::optional<Error> error = parser.feed(dashBoundary() + cd + "first" + next() + cd +
                                                 "second" + next() + field("c") + "3" + close());
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, ErrorKind::InvalidValue);
  EXPECT_EQ(error->message, "only one file may be uploaded");
  EXPECT_EQ(error->param, "file");
  ASSERT_EQ(recorder.parts.size(), 1U);
  EXPECT_EQ(recorder.parts[0].content, "first");
  EXPECT_TRUE(recorder.parts[0].ended);
  const std::optional<Error> again = parser.feed("x");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->message, error->message);
  ASSERT_TRUE(parser.finish());
  EXPECT_EQ(parser.finish()->kind, ErrorKind::InvalidValue);
}

TEST(MultipartParser, ASinkErrorFromPartDataStopsTheParser) {
  Recorder recorder;
  recorder.refuse_data_after = 4;
  MultipartParser parser(std::string(kBoundary), recorder);
  ASSERT_FALSE(parser.feed(dashBoundary() + field("file") + "1234"));
  const std::optional<Error> error = parser.feed("5");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->kind, ErrorKind::PayloadTooLarge);
  EXPECT_FALSE(recorder.parts[0].ended);
  EXPECT_EQ(parser.feed(close())->kind, ErrorKind::PayloadTooLarge);
}

}  // namespace
}  // namespace tollgate::http
