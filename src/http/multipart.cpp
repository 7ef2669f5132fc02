#include "http/multipart.hpp"

#include <cctype>
#include <utility>
#include <vector>

#include "core/text.hpp"

namespace tollgate::http {
namespace {

constexpr std::size_t kMaxBoundaryChars = 70;  // RFC 2046 §5.1.1
constexpr std::string_view kFormData = "multipart/form-data";
constexpr std::string_view kMalformed = "malformed multipart body: ";
constexpr std::string_view kCrlf = "\r\n";
constexpr unsigned char kFirstPrintable = 0x20;
constexpr unsigned char kDelete = 0x7f;
constexpr std::string_view kBadDelimiterEnd =
    "a boundary delimiter is followed by bytes other than CRLF or \"--\"";

Error invalidContentType(std::string_view what) {
  return Error{ErrorKind::InvalidMultipart, std::string(what), ""};
}

Error malformed(std::string_view what) {
  std::string message(kMalformed);
  message.append(what);
  return Error{ErrorKind::InvalidMultipart, std::move(message), ""};
}

bool isOws(char c) { return c == ' ' || c == '\t'; }

// RFC 9110 §5.6.2.
bool isTchar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// RFC 2046 §5.1.1 bcharsnospace.
bool isBcharNoSpace(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
         std::string_view("'()+_,-./:=?").find(c) != std::string_view::npos;
}

std::string_view trimOws(std::string_view s) {
  while (!s.empty() && isOws(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && isOws(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

std::size_t skipOws(std::string_view s, std::size_t i) {
  while (i < s.size() && isOws(s[i])) {
    ++i;
  }
  return i;
}

// The token starting at s[i] (possibly empty); advances i past it.
std::string_view readToken(std::string_view s, std::size_t& i) {
  const std::size_t start = i;
  while (i < s.size() && isTchar(s[i])) {
    ++i;
  }
  return s.substr(start, i - start);
}

// qdtext, and the second byte of a quoted-pair minus the space and tab (RFC 9110 §5.6.4).
bool isQuotedText(unsigned char c) {
  return c == '\t' || c == ' ' || (c > ' ' && c != '"' && c != '\\' && c != kDelete);
}

// The quoted-string starting at s[i] == '"', its backslash escapes undone; advances i past it.
// nullopt when it is unterminated or holds a byte not allowed there.
std::optional<std::string> readQuotedString(std::string_view s, std::size_t& i) {
  std::string out;
  for (++i; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') {
      ++i;
      return out;
    }
    if (c == '\\') {
      if (++i == s.size()) {
        return std::nullopt;
      }
      const auto escaped = static_cast<unsigned char>(s[i]);
      if (!isQuotedText(escaped) && escaped != '"' && escaped != '\\') {
        return std::nullopt;
      }
      out.push_back(static_cast<char>(escaped));
    } else if (isQuotedText(c)) {
      out.push_back(static_cast<char>(c));
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

struct Parameter {
  std::string name;  ///< Lower case.
  std::string value;
};

// `*( OWS ";" OWS token "=" ( token / quoted-string ) ) OWS`, the parameters after a media type
// or disposition type (RFC 9110 §5.6.6, RFC 6266 §4.1); nullopt when malformed.
std::optional<std::vector<Parameter>> parseParameters(std::string_view s) {
  std::vector<Parameter> out;
  std::size_t i = 0;
  while (true) {
    i = skipOws(s, i);
    if (i == s.size()) {
      return out;
    }
    if (s[i] != ';') {
      return std::nullopt;
    }
    i = skipOws(s, i + 1);
    const std::string_view name = readToken(s, i);
    if (name.empty() || i == s.size() || s[i] != '=') {
      return std::nullopt;
    }
    ++i;
    std::string value;
    if (i < s.size() && s[i] == '"') {
      std::optional<std::string> quoted = readQuotedString(s, i);
      if (!quoted) {
        return std::nullopt;
      }
      value = std::move(*quoted);
    } else {
      value = readToken(s, i);
      if (value.empty()) {
        return std::nullopt;
      }
    }
    out.push_back(Parameter{text::lowerAscii(name), std::move(value)});
  }
}

// The length of the longest proper prefix of `delimiter` that `data` ends with: the bytes to keep
// back because the next feed may complete them into a delimiter.
std::size_t partialDelimiterLength(std::string_view data, std::string_view delimiter) {
  const std::size_t longest = delimiter.size() - 1;
  for (std::size_t p = data.size() > longest ? data.size() - longest : 0; p < data.size(); ++p) {
    if (data[p] == delimiter.front() && delimiter.starts_with(data.substr(p))) {
      return data.size() - p;
    }
  }
  return 0;
}

// An RFC 8187 ext-value `UTF-8'[language]'percent-encoded`, decoded; nullopt when malformed or not
// UTF-8.
std::optional<std::string> decodeExtValue(std::string_view s) {
  constexpr std::string_view kCharset = "utf-8'";
  if (s.size() < kCharset.size() ||
      !text::equalsIgnoreCase(s.substr(0, kCharset.size()), kCharset)) {
    return std::nullopt;
  }
  s.remove_prefix(kCharset.size());
  const std::size_t language_end = s.find('\'');
  if (language_end == std::string_view::npos) {
    return std::nullopt;
  }
  std::optional<std::string> decoded = text::percentDecode(s.substr(language_end + 1));
  if (!decoded || !text::isValidUtf8(*decoded)) {
    return std::nullopt;
  }
  return decoded;
}

// The head of a part from its Content-Disposition value `value` and Content-Type.
Result<PartHead> parseDisposition(std::string_view value, std::string content_type) {
  std::size_t i = 0;
  if (!text::equalsIgnoreCase(readToken(value, i), "form-data")) {
    return malformed("a part's Content-Disposition is not form-data");
  }
  std::optional<std::vector<Parameter>> parameters = parseParameters(value.substr(i));
  if (!parameters) {
    return malformed("a part's Content-Disposition has malformed parameters");
  }
  std::optional<std::string> name;
  std::optional<std::string> filename;
  std::optional<std::string> filename_ext;
  for (Parameter& p : *parameters) {
    std::optional<std::string>* slot = p.name == "name"        ? &name
                                       : p.name == "filename"  ? &filename
                                       : p.name == "filename*" ? &filename_ext
                                                               : nullptr;
    if (slot == nullptr) {
      continue;
    }
    if (slot->has_value()) {
      return malformed("a part's Content-Disposition repeats the parameter " + p.name);
    }
    *slot = std::move(p.value);
  }
  if (!name) {
    return malformed("a part has no name");
  }
  if (name->empty()) {
    return malformed("a part has an empty name");
  }
  PartHead head{std::move(*name), std::move(filename), std::move(content_type)};
  if (filename_ext) {
    head.filename = decodeExtValue(*filename_ext);
    if (!head.filename) {
      return malformed("a part's filename* is not a UTF-8''percent-encoded value");
    }
  }
  return head;
}

}  // namespace

Result<std::string> multipartBoundary(std::string_view content_type) {
  std::size_t i = skipOws(content_type, 0);
  const std::string_view type = readToken(content_type, i);
  std::string_view subtype;
  if (i < content_type.size() && content_type[i] == '/') {
    ++i;
    subtype = readToken(content_type, i);
  }
  if (!text::equalsIgnoreCase(type, "multipart") || !text::equalsIgnoreCase(subtype, "form-data")) {
    return invalidContentType("the Content-Type is not " + std::string(kFormData));
  }
  const std::optional<std::vector<Parameter>> parameters = parseParameters(content_type.substr(i));
  if (!parameters) {
    return invalidContentType("the multipart/form-data Content-Type has malformed parameters");
  }
  std::optional<std::string> boundary;
  for (const Parameter& p : *parameters) {
    if (p.name != "boundary") {
      continue;
    }
    if (boundary) {
      return invalidContentType("the multipart/form-data Content-Type has two boundary parameters");
    }
    boundary = p.value;
  }
  if (!boundary) {
    return invalidContentType("the multipart/form-data Content-Type has no boundary parameter");
  }
  if (boundary->empty() || boundary->size() > kMaxBoundaryChars) {
    return invalidContentType("the multipart boundary must be 1 to 70 characters long");
  }
  for (const char c : *boundary) {
    if (!isBcharNoSpace(c) && c != ' ') {
      return invalidContentType(
          "the multipart boundary holds a character RFC 2046 does not allow (allowed: letters, "
          "digits, space and '()+_,-./:=?)");
    }
  }
  if (boundary->back() == ' ') {
    return invalidContentType("the multipart boundary must not end in a space");
  }
  return std::move(*boundary);
}

MultipartParser::MultipartParser(std::string boundary, Sink& sink, Limits limits)
    : delimiter_("\r\n--" + boundary), sink_(sink), limits_(limits) {}

MultipartParser::MultipartParser(std::string boundary, Sink& sink)
    : MultipartParser(std::move(boundary), sink, Limits{}) {}

std::optional<Error> MultipartParser::feed(std::string_view bytes) {
  if (error_) {
    return error_;
  }
  if (finished_) {
    return fail(malformed("bytes were fed after the end of the body"));
  }
  if (bytes.empty()) {
    return std::nullopt;
  }
  // Parse the caller's bytes in place when nothing is held back, so that a large chunk is not
  // copied; either way only the unconsumed tail is kept.
  const bool from_buffer = !buffer_.empty();
  if (from_buffer) {
    buffer_.append(bytes);
  }
  const std::string_view data = from_buffer ? std::string_view(buffer_) : bytes;
  const std::size_t consumed = process(data);
  if (error_) {
    buffer_ = std::string();
    return error_;
  }
  if (from_buffer) {
    buffer_.erase(0, consumed);
  } else {
    buffer_.assign(data.substr(consumed));
  }
  return std::nullopt;
}

std::optional<Error> MultipartParser::finish() {
  if (error_) {
    return error_;
  }
  switch (state_) {
    case State::Epilogue:
      finished_ = true;
      return std::nullopt;
    case State::Preamble:
      return fail(malformed("the body is truncated: it has no boundary delimiter"));
    case State::AfterDelimiter:
      return fail(malformed("the body is truncated after a boundary delimiter"));
    case State::Headers:
      return fail(malformed("the body is truncated inside a part's headers"));
    case State::Content:
      break;
  }
  return fail(malformed("the body is truncated inside a part (no closing boundary delimiter)"));
}

std::size_t MultipartParser::process(std::string_view data) {
  std::size_t total = 0;
  while (!data.empty() && !error_) {
    std::size_t n = 0;
    switch (state_) {
      case State::Preamble:
        n = processPreamble(data);
        break;
      case State::AfterDelimiter:
        n = processAfterDelimiter(data);
        break;
      case State::Headers:
        n = processHeaders(data);
        break;
      case State::Content:
        n = processContent(data);
        break;
      case State::Epilogue:
        n = data.size();  // Ignored (RFC 2046 §5.1.1).
        break;
    }
    if (n == 0) {
      break;  // The rest needs more bytes.
    }
    pos_ += n;
    total += n;
    data.remove_prefix(n);
  }
  return total;
}

std::size_t MultipartParser::processPreamble(std::string_view data) {
  if (pos_ == 0) {
    // The first delimiter may open the body without the CRLF before it.
    const std::string_view dash_boundary = std::string_view(delimiter_).substr(kCrlf.size());
    if (data.size() < dash_boundary.size() && dash_boundary.starts_with(data)) {
      return 0;
    }
    if (data.starts_with(dash_boundary)) {
      state_ = State::AfterDelimiter;
      padding_ = false;
      return dash_boundary.size();
    }
  }
  const std::size_t found = data.find(delimiter_);
  const std::size_t preamble = found != std::string_view::npos
                                   ? found
                                   : data.size() - partialDelimiterLength(data, delimiter_);
  if (pos_ + preamble > limits_.max_preamble_bytes) {
    fail(malformed("the preamble before the first boundary is longer than " +
                   std::to_string(limits_.max_preamble_bytes) + " bytes"));
    return 0;
  }
  if (found == std::string_view::npos) {
    return preamble;
  }
  state_ = State::AfterDelimiter;
  padding_ = false;
  return found + delimiter_.size();
}

std::size_t MultipartParser::processAfterDelimiter(std::string_view data) {
  std::size_t i = 0;
  while (i < data.size() && isOws(data[i])) {
    padding_ = true;  // RFC 2046 transport padding.
    ++i;
  }
  if (i == data.size()) {
    return i;
  }
  const bool close = data[i] == '-' && !padding_;
  if (!close && data[i] != '\r') {
    fail(malformed(kBadDelimiterEnd));
    return 0;
  }
  if (i + 1 == data.size()) {
    return i;  // Both "--" and CRLF need two bytes.
  }
  if (close && data[i + 1] == '-') {
    state_ = State::Epilogue;
    return i + 2;
  }
  if (close || data[i + 1] != '\n') {
    fail(malformed(kBadDelimiterEnd));
    return 0;
  }
  if (++parts_ > limits_.max_parts) {
    fail(malformed("the body has more than " + std::to_string(limits_.max_parts) + " parts"));
    return 0;
  }
  state_ = State::Headers;
  head_bytes_ = 0;
  disposition_.reset();
  content_type_.reset();
  return i + kCrlf.size();
}

std::size_t MultipartParser::processHeaders(std::string_view data) {
  const std::string too_large =
      "a part's header block is larger than " + std::to_string(limits_.max_head_bytes) + " bytes";
  std::size_t i = 0;
  while (true) {
    const std::size_t eol = data.find(kCrlf, i);
    if (eol == std::string_view::npos) {
      if (head_bytes_ + (data.size() - i) > limits_.max_head_bytes) {
        fail(malformed(too_large));
        return 0;
      }
      return i;  // Keep the incomplete line.
    }
    const std::string_view line = data.substr(i, eol - i);
    head_bytes_ += line.size() + kCrlf.size();
    if (head_bytes_ > limits_.max_head_bytes) {
      fail(malformed(too_large));
      return 0;
    }
    i = eol + kCrlf.size();
    if (line.empty()) {
      if (std::optional<Error> e = headEnd()) {
        fail(std::move(*e));
        return 0;
      }
      state_ = State::Content;
      return i;
    }
    if (std::optional<Error> e = headerLine(line)) {
      fail(std::move(*e));
      return 0;
    }
  }
}

std::size_t MultipartParser::processContent(std::string_view data) {
  const std::size_t found = data.find(delimiter_);
  const std::size_t content = found != std::string_view::npos
                                  ? found
                                  : data.size() - partialDelimiterLength(data, delimiter_);
  if (content > 0) {
    if (std::optional<Error> e = sink_.partData(data.substr(0, content), pos_)) {
      fail(std::move(*e));
      return 0;
    }
  }
  if (found == std::string_view::npos) {
    return content;
  }
  if (std::optional<Error> e = sink_.partEnd()) {
    fail(std::move(*e));
    return 0;
  }
  state_ = State::AfterDelimiter;
  padding_ = false;
  return found + delimiter_.size();
}

std::optional<Error> MultipartParser::headerLine(std::string_view line) {
  if (isOws(line.front())) {
    return malformed("a part's headers use obsolete line folding");
  }
  for (const char c : line) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < kFirstPrintable && c != '\t') || u == kDelete) {
      return malformed("a part's header line holds a control character");
    }
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    return malformed("a part's header line has no colon");
  }
  const std::string_view name = line.substr(0, colon);
  std::size_t end = 0;
  if (name.empty() || readToken(name, end).size() != name.size()) {
    return malformed("a part's header name is not a token");
  }
  const std::string_view value = trimOws(line.substr(colon + 1));
  if (text::equalsIgnoreCase(name, "content-disposition")) {
    if (disposition_) {
      return malformed("a part has two Content-Disposition headers");
    }
    disposition_.emplace(value);
  } else if (text::equalsIgnoreCase(name, "content-type")) {
    if (content_type_) {
      return malformed("a part has two Content-Type headers");
    }
    content_type_.emplace(value);
  }
  return std::nullopt;
}

std::optional<Error> MultipartParser::headEnd() {
  if (!disposition_) {
    return malformed("a part has no Content-Disposition header");
  }
  Result<PartHead> head = parseDisposition(*disposition_, content_type_.value_or(""));
  if (!head) {
    return std::move(head).error();
  }
  return sink_.partBegin(*head);
}

std::optional<Error> MultipartParser::fail(Error error) {
  error_ = std::move(error);
  return error_;
}

}  // namespace tollgate::http
