#include "net/http1_parser.hpp"

#include <algorithm>
#include <boost/beast/core/string.hpp>
#include <cstring>
#include <limits>

#include "core/text.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tollgate::net {
namespace http1 {
namespace {

constexpr unsigned char byte(char c) { return static_cast<unsigned char>(c); }

/// tchar (RFC 9110 §5.6.2): ! # $ % & ' * + - . ^ _ ` | ~ DIGIT ALPHA.
constexpr std::array<bool, 256> kToken = [] {
  std::array<bool, 256> t{};
  for (const char c : std::string_view("!#$%&'*+-.^_`|~")) {
    t[byte(c)] = true;
  }
  for (int c = '0'; c <= '9'; ++c) {
    t[c] = true;
  }
  for (int c = 'a'; c <= 'z'; ++c) {
    t[c] = true;
    t[c - 'a' + 'A'] = true;
  }
  return t;
}();

bool token(char c) { return kToken[byte(c)]; }
bool space(char c) { return c == ' ' || c == '\t'; }
/// A request target's byte: anything visible, obs-text included.
bool targetByte(char c) { return byte(c) > 0x20 && byte(c) != 0x7f; }
/// A byte that ends a field value or reason phrase: a control other than HTAB, or DEL.
bool valueStop(char c) { return (byte(c) < 0x20 && c != '\t') || byte(c) == 0x7f; }

/// The first byte from `p` that valueStop() holds for, or `end`.
const char* findValueStop(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i below_space = _mm_set1_epi8(0x20);
  const __m128i minus_one = _mm_set1_epi8(-1);
  const __m128i tab = _mm_set1_epi8('\t');
  const __m128i del = _mm_set1_epi8(0x7f);
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compares: obs-text (0x80-0xff) is negative, so neither below 0x20 and >= 0 holds.
    const __m128i control =
        _mm_and_si128(_mm_cmplt_epi8(v, below_space), _mm_cmpgt_epi8(v, minus_one));
    const __m128i stop =
        _mm_or_si128(_mm_andnot_si128(_mm_cmpeq_epi8(v, tab), control), _mm_cmpeq_epi8(v, del));
    if (const int mask = _mm_movemask_epi8(stop); mask != 0) {
      return p + __builtin_ctz(static_cast<unsigned>(mask));
    }
  }
#endif
  while (p < end && !valueStop(*p)) {
    ++p;
  }
  return p;
}

/// Moves `p` to the CR that ends a line of value bytes (a reason phrase, a field value): `bad`
/// for another control byte, BadLineEnding for a CR without its LF, NeedMore when the bytes end.
ParseError toLineEnd(const char*& p, const char* end, ParseError bad) {
  p = findValueStop(p, end);
  if (p == end) {
    return ParseError::NeedMore;
  }
  if (*p != '\r') {
    return bad;
  }
  if (end - p < 2) {
    return ParseError::NeedMore;
  }
  return p[1] == '\n' ? ParseError::None : ParseError::BadLineEnding;
}

const char* skipSpace(const char* p, const char* end) {
  while (p < end && space(*p)) {
    ++p;
  }
  return p;
}

/// Calls `each` with every element of a comma-separated list, trimmed (empty ones too); stops
/// at the first element `each` refuses, and returns false then.
template <class Each>
bool eachElement(std::string_view list, Each each) {
  for (;;) {
    const std::size_t comma = list.find(',');
    if (!each(text::trimOws(list.substr(0, comma)))) {
      return false;
    }
    if (comma == std::string_view::npos) {
      return true;
    }
    list.remove_prefix(comma + 1);
  }
}

/// Whether every byte from `p` to `end` is a tchar (no branch a byte).
bool allToken(const char* p, const char* end) {
  bool all = true;
  for (; p < end; ++p) {
    all &= kToken[byte(*p)];
  }
  return all;
}

bool allToken(std::string_view s) { return allToken(s.data(), s.data() + s.size()); }

/// `name` (a token) equals `lower` (lower case, as long, 4 bytes or more) in any case: with the
/// name's bytes all tchars, setting bit 0x20 lowers a letter and makes no other byte a letter or
/// '-'. Compared 8 (or 4) bytes at a time, the last word overlapping the one before.
bool sameName(std::string_view name, std::string_view lower) {
  const std::size_t n = lower.size();
  if (n >= 8) {
    const auto word = [](const char* p) {
      std::uint64_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    };
    constexpr std::uint64_t kLower = 0x2020202020202020;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      if ((word(name.data() + i) | kLower) != word(lower.data() + i)) {
        return false;
      }
    }
    return (word(name.data() + n - 8) | kLower) == word(lower.data() + n - 8);
  }
  const auto word = [](const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  constexpr std::uint32_t kLower = 0x20202020;
  return (word(name.data()) | kLower) == word(lower.data()) &&
         (word(name.data() + n - 4) | kLower) == word(lower.data() + n - 4);
}

/// A decimal number of one or more digits that fits 64 bits.
std::optional<std::uint64_t> decimal(std::string_view s) {
  if (s.empty()) {
    return std::nullopt;
  }
  std::uint64_t v = 0;
  for (const char c : s) {
    if (c < '0' || c > '9' || v > (std::numeric_limits<std::uint64_t>::max() - (c - '0')) / 10) {
      return std::nullopt;
    }
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

/// Where the CRLF that ends a line starts, searching from `from`; nullptr with NeedMore when the
/// bytes end first, with BadLineEnding for a CR not followed by LF.
const char* findCrlf(const char* from, const char* end, ParseError& error) {
  const auto* cr =
      from < end ? static_cast<const char*>(std::memchr(from, '\r', end - from)) : nullptr;
  if (cr == nullptr || cr + 1 == end) {
    error = ParseError::NeedMore;
    return nullptr;
  }
  if (cr[1] != '\n') {
    error = ParseError::BadLineEnding;
    return nullptr;
  }
  return cr;
}

/// chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] ) (RFC 9112
/// §7.1.1), exactly the bytes from `p` to `end`.
bool chunkExtensions(const char* p, const char* end) {
  const auto name = [&] {
    const char* start = p;
    while (p < end && token(*p)) {
      ++p;
    }
    return p != start;
  };
  while (p < end) {
    p = skipSpace(p, end);
    if (p == end || *p != ';') {
      return false;
    }
    p = skipSpace(p + 1, end);
    if (!name()) {
      return false;
    }
    const char* after = skipSpace(p, end);
    if (after == end) {
      return after == p;  // No white space after the last extension.
    }
    if (*after != '=') {
      continue;
    }
    p = skipSpace(after + 1, end);
    if (p < end && *p == '"') {
      for (++p;; ++p) {
        if (p == end) {
          return false;
        }
        if (*p == '"') {
          ++p;
          break;
        }
        if (*p == '\\' && ++p == end) {
          return false;
        }
        if (valueStop(*p)) {
          return false;
        }
      }
    } else if (!name()) {
      return false;
    }
  }
  return true;
}

}  // namespace

Field fieldCode(std::string_view name) {
  // Only for a name the parser has checked (sameName's condition); by length first.
  const auto is = [name](std::string_view lower, Field code) {
    return sameName(name, lower) ? code : Field::Other;
  };
  switch (name.size()) {
    case 4:
      return is("host", Field::Host);
    case 6:
      return is("expect", Field::Expect);
    case 10:
      return (byte(name[0]) | 0x20) == 'c' ? is("connection", Field::Connection)
                                           : is("tracestate", Field::Tracestate);
    case 11:
      return is("traceparent", Field::Traceparent);
    case 12:
      return is("content-type", Field::ContentType);
    case 13:
      return is("authorization", Field::Authorization);
    case 14:
      return is("content-length", Field::ContentLength);
    case 16:
      return is("proxy-connection", Field::ProxyConnection);
    case 17:
      return is("transfer-encoding", Field::TransferEncoding);
    default:
      return Field::Other;
  }
}

std::string_view describe(ParseError e) {
  switch (e) {
    case ParseError::None:
      return "no error";
    case ParseError::NeedMore:
      return "the message is incomplete";
    case ParseError::NeedBuffer:
      return "no room for the body";
    case ParseError::HeaderLimit:
      return "the head is too large";
    case ParseError::BodyLimit:
      return "the body is too large";
    case ParseError::NoSpace:
      return "no room to keep the body";
    case ParseError::BadMethod:
      return "bad method";
    case ParseError::BadTarget:
      return "bad target";
    case ParseError::BadVersion:
      return "bad version";
    case ParseError::BadStatus:
      return "bad status code";
    case ParseError::BadReason:
      return "bad reason phrase";
    case ParseError::BadLineEnding:
      return "a line does not end in CRLF";
    case ParseError::BadField:
      return "bad field name";
    case ParseError::BadValue:
      return "bad field value";
    case ParseError::ObsFold:
      return "a field value folded over lines (obs-fold)";
    case ParseError::BadContentLength:
      return "bad Content-Length";
    case ParseError::MultipleContentLength:
      return "Content-Length values that differ";
    case ParseError::BadTransferEncoding:
      return "bad Transfer-Encoding";
    case ParseError::BadChunk:
      return "bad chunk";
    case ParseError::BadChunkExtension:
      return "bad chunk extension";
    case ParseError::PartialMessage:
      return "the message ended early";
  }
  return "unknown error";
}

bool Parser::keepAlive() const {
  if (to_eof_) {
    return false;  // Delimited by the close.
  }
  return version_ >= 11 ? !close_ : keep_alive_;
}

bool Parser::spend(std::uint64_t size) {
  if (!body_limit_) {
    return true;
  }
  if (size > *body_limit_) {
    return false;
  }
  *body_limit_ -= size;
  return true;
}

std::size_t Parser::put(std::string_view in, ParseError& error) {
  error = ParseError::None;
  const char* p = in.data();
  const char* const end = p + in.size();
  if (state_ == State::Head) {
    if (in.empty()) {
      error = ParseError::NeedMore;
      return 0;
    }
    const std::size_t window = std::min(in.size(), header_limit_);
    std::size_t used = 0;
    if (scanned_ > 0) {
      // A head that did not end before: parsed again only once its end is here.
      const std::string_view seen(p, window);
      if (seen.find("\r\n\r\n", scanned_ < 3 ? 0 : scanned_ - 3) == std::string_view::npos) {
        scanned_ = window;
        error = in.size() >= header_limit_ ? ParseError::HeaderLimit : ParseError::NeedMore;
        return 0;
      }
    }
    error = head(p, p + window, used);
    if (error == ParseError::NeedMore) {
      scanned_ = window;
      if (in.size() >= header_limit_) {
        error = ParseError::HeaderLimit;
      }
      return 0;
    }
    if (error != ParseError::None) {
      return 0;
    }
    scanned_ = 0;
    p += used;
    if (!eager_ || state_ == State::Complete) {
      return used;
    }
  }
  error = body(p, end);
  return static_cast<std::size_t>(p - in.data());
}

void Parser::putEof(ParseError& error) {
  error = ParseError::None;
  if (state_ == State::ToEof) {
    state_ = State::Complete;
  } else if (state_ != State::Complete) {
    error = ParseError::PartialMessage;
  }
}

ParseError Parser::head(const char* p, const char* end, std::size_t& used) {
  const char* const begin = p;
  fields_.clear();
  length_.reset();
  chunked_ = close_ = keep_alive_ = false;
  if (const ParseError e = request_ ? requestLine(p, end) : statusLine(p, end);
      e != ParseError::None) {
    return e;
  }
  for (;;) {
    if (end - p < 2) {
      return ParseError::NeedMore;
    }
    if (p[0] == '\r') {
      if (p[1] != '\n') {
        return ParseError::BadLineEnding;
      }
      p += 2;
      break;
    }
    if (const ParseError e = field(begin, p, end, false); e != ParseError::None) {
      return e;
    }
  }
  used = static_cast<std::size_t>(p - begin);
  fields_.keep({begin, used});
  return endHead();
}

namespace {

/// "HTTP/1.0" or "HTTP/1.1" at `p`.
ParseError httpVersion(const char*& p, const char* end, unsigned& v) {
  if (end - p < 8) {
    return ParseError::NeedMore;
  }
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (std::memcmp(p, "HTTP/", 5) != 0 || !digit(p[5]) || p[6] != '.' || !digit(p[7])) {
    return ParseError::BadVersion;
  }
  v = static_cast<unsigned>(10 * (p[5] - '0') + (p[7] - '0'));
  p += 8;
  return v == 10 || v == 11 ? ParseError::None : ParseError::BadVersion;
}

}  // namespace

ParseError Parser::requestLine(const char*& p, const char* end) {
  const char* const method = p;
  while (p < end && token(*p)) {
    ++p;
  }
  if (p == end) {
    return ParseError::NeedMore;
  }
  if (*p != ' ' || p == method) {
    return ParseError::BadMethod;
  }
  const std::size_t method_size = static_cast<std::size_t>(p - method);
  const char* const target = ++p;
  while (p < end && targetByte(*p)) {
    ++p;
  }
  if (p == end) {
    return ParseError::NeedMore;
  }
  if (*p != ' ' || p == target) {
    return ParseError::BadTarget;
  }
  const std::size_t target_size = static_cast<std::size_t>(p - target);
  ++p;
  if (const ParseError e = httpVersion(p, end, version_); e != ParseError::None) {
    return e;
  }
  if (end - p < 2) {
    return ParseError::NeedMore;
  }
  if (p[0] != '\r' || p[1] != '\n') {
    return ParseError::BadVersion;
  }
  p += 2;
  line_.assign(method, method_size).append(target, target_size);
  method_size_ = method_size;
  return ParseError::None;
}

ParseError Parser::statusLine(const char*& p, const char* end) {
  if (const ParseError e = httpVersion(p, end, version_); e != ParseError::None) {
    return e;
  }
  if (p == end) {
    return ParseError::NeedMore;
  }
  if (*p++ != ' ') {
    return ParseError::BadVersion;
  }
  if (end - p < 4) {
    return ParseError::NeedMore;
  }
  int code = 0;
  for (int i = 0; i < 3; ++i) {
    if (p[i] < '0' || p[i] > '9') {
      return ParseError::BadStatus;
    }
    code = code * 10 + (p[i] - '0');
  }
  if (p[3] != ' ') {
    return ParseError::BadStatus;
  }
  p += 4;
  if (const ParseError e = toLineEnd(p, end, ParseError::BadReason); e != ParseError::None) {
    return e;
  }
  p += 2;
  status_ = code;
  return ParseError::None;
}

ParseError Parser::field(const char* begin, const char*& p, const char* end, bool trailer) {
  const char* const name = p;
  const auto* colon = static_cast<const char*>(std::memchr(p, ':', end - p));
  if (colon == nullptr) {
    // No colon yet: more is needed if every byte so far may be part of a name.
    return allToken(p, end) ? ParseError::NeedMore : ParseError::BadField;
  }
  if (colon == name || !allToken(name, colon)) {
    return ParseError::BadField;
  }
  const std::string_view field_name(name, static_cast<std::size_t>(colon - name));
  p = colon + 1;
  std::string_view value;
  std::string unfolded;  // Only for a value folded over lines.
  bool folds = false;
  for (bool first = true;; first = false) {
    const char* const start = skipSpace(p, end);
    p = start;
    if (const ParseError e = toLineEnd(p, end, ParseError::BadValue); e != ParseError::None) {
      return e;
    }
    if (end - p < 3) {
      return ParseError::NeedMore;  // The next line's first byte says whether this one goes on.
    }
    const char* last = p;
    while (last > start && space(last[-1])) {
      --last;
    }
    const std::string_view piece(start, static_cast<std::size_t>(last - start));
    p += 2;
    const bool folded = space(*p);
    if (first && !folded) {
      value = piece;
      break;
    }
    if (request_) {
      return ParseError::ObsFold;
    }
    folds = true;
    if (!piece.empty()) {
      unfolded.append(unfolded.empty() ? "" : " ").append(piece);
    }
    if (!folded) {
      value = unfolded;
      break;
    }
  }
  const Field code = fieldCode(field_name);
  if (code != Field::Other) {
    if (const ParseError e = framing(code, value); e != ParseError::None) {
      return e;
    }
  }
  if (trailer) {
    return ParseError::None;
  }
  if (folds) {
    fields_.add(code, field_name, value);
  } else {
    const auto offset = [begin](const char* at) { return static_cast<std::uint32_t>(at - begin); };
    fields_.addAt(code, offset(name), static_cast<std::uint32_t>(field_name.size()),
                  offset(value.data()), static_cast<std::uint32_t>(value.size()));
  }
  return ParseError::None;
}

ParseError Parser::framing(Field code, std::string_view value) {
  switch (code) {
    case Field::Connection:
    case Field::ProxyConnection: {
      const bool listed = eachElement(value, [&](std::string_view option) {
        close_ = close_ || boost::beast::iequals(option, "close");
        keep_alive_ = keep_alive_ || boost::beast::iequals(option, "keep-alive");
        return allToken(option);
      });
      return listed ? ParseError::None : ParseError::BadValue;
    }
    case Field::ContentLength: {
      if (chunked_) {
        return ParseError::BadContentLength;
      }
      bool differs = false;
      const bool listed = eachElement(value, [&](std::string_view number) {
        const auto v = decimal(number);
        if (v && length_ && *v != *length_) {
          differs = true;
          return false;
        }
        length_ = v ? v : length_;
        return v.has_value();
      });
      if (differs) {
        return ParseError::MultipleContentLength;
      }
      return listed ? ParseError::None : ParseError::BadContentLength;
    }
    case Field::TransferEncoding: {
      if (chunked_ || length_) {
        return ParseError::BadTransferEncoding;
      }
      // Chunked when the first "chunked" is the last coding (RFC 9112 §6.1); a coding that is
      // not a token makes the framing a guess, and is refused.
      bool seen = false;
      bool last = false;
      const bool listed = eachElement(value, [&](std::string_view coding) {
        if (!coding.empty()) {
          last = !seen && boost::beast::iequals(coding, "chunked");
          seen = seen || last;
        }
        return allToken(coding);
      });
      chunked_ = listed && last;
      return listed ? ParseError::None : ParseError::BadTransferEncoding;
    }
    default:
      return ParseError::None;
  }
}

ParseError Parser::endHead() {
  const bool no_body =
      !request_ && (status_ / 100 == 1 || status_ == 204 || status_ == 304);  // RFC 9112 §6.3
  if (no_body) {
    state_ = State::Complete;
  } else if (length_) {
    if (!spend(*length_)) {
      return ParseError::BodyLimit;
    }
    remaining_ = *length_;
    state_ = remaining_ > 0 ? State::Body : State::Complete;
  } else if (chunked_) {
    state_ = State::ChunkHeader;
  } else {
    to_eof_ = !request_;
    state_ = to_eof_ ? State::ToEof : State::Complete;
  }
  return ParseError::None;
}

ParseError Parser::body(const char*& p, const char* end) {
  for (;;) {
    switch (state_) {
      case State::Head:
      case State::Complete:
        return ParseError::None;
      case State::Body:
      case State::ChunkBody: {
        if (p == end) {
          return ParseError::NeedMore;
        }
        const std::size_t n =
            static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, end - p));
        ParseError e = ParseError::None;
        const std::size_t took = store({p, n}, e);
        p += took;
        remaining_ -= took;
        if (remaining_ == 0) {
          state_ = state_ == State::Body ? State::Complete : State::ChunkHeader;
        }
        if (e != ParseError::None) {
          return e;
        }
        break;
      }
      case State::ToEof: {
        if (p == end) {
          return ParseError::NeedMore;
        }
        const std::size_t n = static_cast<std::size_t>(end - p);
        if (body_limit_ && n > *body_limit_) {
          return ParseError::BodyLimit;
        }
        ParseError e = ParseError::None;
        const std::size_t took = store({p, n}, e);
        p += took;
        spend(took);
        if (e != ParseError::None) {
          return e;
        }
        break;
      }
      case State::ChunkHeader:
        if (const ParseError e = chunkHeader(p, end); e != ParseError::None) {
          return e;
        }
        break;
      case State::Trailer:
        if (const ParseError e = trailer(p, end); e != ParseError::None) {
          return e;
        }
        break;
    }
  }
}

ParseError Parser::chunkHeader(const char*& p, const char* end) {
  const char* line = p;
  if (crlf_due_) {
    if (end - line < 2) {
      return ParseError::NeedMore;
    }
    if (line[0] != '\r' || line[1] != '\n') {
      return ParseError::BadChunk;
    }
    line += 2;
  }
  ParseError e = ParseError::None;
  const char* const from = line + std::min<std::size_t>(scanned_, end - line);
  const char* const eol = findCrlf(from, end, e);
  if (eol == nullptr) {
    // A CR at the end may be followed by its LF: the search goes on from it.
    scanned_ = static_cast<std::size_t>(end - line) - (end > line && end[-1] == '\r' ? 1 : 0);
    return e;
  }
  scanned_ = 0;
  std::uint64_t size = 0;
  const char* q = line;
  if (q == eol || hexDigit(*q) < 0) {
    return ParseError::BadChunk;
  }
  for (int d; q < eol && (d = hexDigit(*q)) >= 0; ++q) {
    if (size > (std::numeric_limits<std::uint64_t>::max() >> 4)) {
      return ParseError::BadChunk;
    }
    size = size * 16 + static_cast<std::uint64_t>(d);
  }
  if (!chunkExtensions(q, eol)) {
    return ParseError::BadChunkExtension;
  }
  if (size > 0 && !spend(size)) {
    return ParseError::BodyLimit;
  }
  p = eol + 2;
  crlf_due_ = size > 0;
  remaining_ = size;
  state_ = size > 0 ? State::ChunkBody : State::Trailer;
  return ParseError::None;
}

ParseError Parser::trailer(const char*& p, const char* end) {
  // Parsed only once the empty line that ends it is here (a search that never starts over).
  if (end - p < 2) {
    return ParseError::NeedMore;
  }
  if (!(p[0] == '\r' && p[1] == '\n')) {
    const std::string_view rest(p, static_cast<std::size_t>(end - p));
    if (rest.find("\r\n\r\n", scanned_ < 3 ? 0 : scanned_ - 3) == std::string_view::npos) {
      scanned_ = rest.size();
      return ParseError::NeedMore;
    }
  }
  scanned_ = 0;
  const char* q = p;
  while (!(q[0] == '\r' && q[1] == '\n')) {
    if (const ParseError e = field(p, q, end, true); e != ParseError::None) {
      return e == ParseError::NeedMore ? ParseError::BadValue : e;
    }
  }
  p = q + 2;
  state_ = State::Complete;
  return ParseError::None;
}

}  // namespace http1

void HeadFields::push(const Place& p) {
  if (size_ < kInPlace) {
    in_place_[size_] = p;
  } else {
    more_.push_back(p);
  }
  ++size_;
}

void HeadFields::add(http1::Field code, std::string_view name, std::string_view value) {
  // Heads are bounded (the parser's header limit), so every offset fits.
  const auto at = static_cast<std::uint32_t>(apart_.size());
  apart_.append(name).append(value);
  push({at, static_cast<std::uint32_t>(name.size()), at + static_cast<std::uint32_t>(name.size()),
        static_cast<std::uint32_t>(value.size()), code, true});
}

void HeadFields::addAt(http1::Field code, std::uint32_t name_at, std::uint32_t name_size,
                       std::uint32_t value_at, std::uint32_t value_size) {
  push({name_at, name_size, value_at, value_size, code, false});
}

void HeadFields::clear() {
  head_.clear();
  apart_.clear();
  more_.clear();
  size_ = 0;
}

HeadFields::Entry HeadFields::operator[](std::size_t i) const {
  const Place& p = place(i);
  return Entry{p.code, std::string_view(p.apart ? apart_ : head_).substr(p.name_at, p.name_size),
               value(p)};
}

std::string_view HeadFields::find(std::string_view name) const {
  for (std::size_t i = 0; i < size(); ++i) {  // In order: the first of repeated fields.
    const Entry f = (*this)[i];
    if (boost::beast::iequals(f.name, name)) {
      return f.value;
    }
  }
  return {};
}

std::string_view HeadFields::find(http1::Field code) const {
  for (std::size_t i = 0; i < size_; ++i) {
    if (const Place& p = place(i); p.code == code) {
      return value(p);
    }
  }
  return {};
}

std::string HeadFields::joined(std::string_view name) const {
  std::string all;
  for (std::size_t i = 0; i < size(); ++i) {
    const Entry f = (*this)[i];
    if (boost::beast::iequals(f.name, name)) {
      all.append(all.empty() ? "" : ",").append(f.value);
    }
  }
  return all;
}

}  // namespace tollgate::net
