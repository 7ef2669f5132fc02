#include "core/json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/text.hpp"

namespace tollgate::json {
namespace {

/// One of RapidJSON's two string streams (StringStream, InsituStringStream), knowing where its
/// text ends: a string's plain runs are then found by text::jsonPlainPrefix (the
/// specialisations below), not by RapidJSON's SIMD scan, which compares bytes with 0x19, not
/// 0x1F, and so let the raw control bytes 0x1A to 0x1F through inside a string, where JSON
/// forbids them. Whatever a reader accepts is valid JSON. Tell() is the offset read, which for
/// the in-situ stream (it reads and writes the same text) is the offset in the text as sent.
template <class Base>
class Bounded : public Base {
 public:
  template <class Text>
  explicit Bounded(Text& text) : Base(text.data()), end_(text.data() + text.size()) {}
  std::string_view rest() const {
    return {this->src_, static_cast<std::size_t>(end_ - this->src_)};
  }
  /// The whole text. Read in place, a byte the reader has passed between a key and its value,
  /// or the one a refusal points at, is as it was sent.
  std::string_view text() const {
    return {this->head_, static_cast<std::size_t>(end_ - this->head_)};
  }

 private:
  const typename Base::Ch* end_;
};

using TextStream = Bounded<rapidjson::StringStream>;
using InPlaceStream = Bounded<rapidjson::InsituStringStream>;

std::size_t plainRun(std::string_view rest) {
  return std::min<std::size_t>(text::jsonPlainPrefix(rest),
                               std::numeric_limits<rapidjson::SizeType>::max());
}

}  // namespace
}  // namespace tollgate::json

template <>
template <>
inline void rapidjson::Reader::ScanCopyUnescapedString(tollgate::json::TextStream& is,
                                                       rapidjson::Reader::StackStream<char>& os) {
  const std::size_t n = tollgate::json::plainRun(is.rest());
  if (n > 0) {  // Push(0) on an empty stack is a null pointer, which memcpy may not take.
    std::memcpy(os.Push(static_cast<rapidjson::SizeType>(n)), is.src_, n);
    is.src_ += n;
  }
}

template <>
template <>
inline void rapidjson::Reader::ScanCopyUnescapedString(tollgate::json::InPlaceStream& is,
                                                       tollgate::json::InPlaceStream& os) {
  const std::size_t n = tollgate::json::plainRun(is.rest());
  if (n > 0 && os.dst_ != is.src_) {  // Once an escape was unescaped, the text moves back.
    std::memmove(os.dst_, is.src_, n);
  }
  is.src_ += n;
  os.dst_ += n;
}

namespace tollgate::json {
namespace {

using rapidjson::SizeType;
using rapidjson::Value;

/// Objects with more members than this are checked for repeated keys by sorting, not pairwise.
constexpr SizeType kPairwiseKeyCheck = 16;

/// Forwards RapidJSON's reader events to the document, refusing to open an array or object
/// deeper than kMaxDepth. Refusing at the opening event also bounds the reader's recursion. Given
/// `values`, it notes where each member's value of a root object lies in the text (`Stream`
/// tells the reader's offset, the same in the text as it was sent even when read in place).
template <class Stream>
class DepthLimited {
 public:
  /// With Keys::Unique, each object's keys are compared as they are read, by a digest of each:
  /// maybeRepeated() is then false when no object can repeat a key, and the walk after the
  /// parse (which names a repeated key and its path) is needed only when it is true.
  DepthLimited(rapidjson::Document& doc, Stream& stream, std::vector<Span>* values, Keys keys)
      : doc_(doc), stream_(stream), values_(values), track_keys_(keys == Keys::Unique) {
    if (track_keys_) {
      constexpr std::size_t kUsualKeys = 32;
      keys_.reserve(kUsualKeys);
      objects_.reserve(kMaxDepth);
    }
  }

  bool Null() { return doc_.Null() && ended(); }
  bool Bool(bool b) { return doc_.Bool(b) && ended(); }
  bool Int(int i) { return doc_.Int(i) && ended(); }
  bool Uint(unsigned i) { return doc_.Uint(i) && ended(); }
  bool Int64(std::int64_t i) { return doc_.Int64(i) && ended(); }
  bool Uint64(std::uint64_t i) { return doc_.Uint64(i) && ended(); }
  bool Double(double d) { return doc_.Double(d) && ended(); }
  bool RawNumber(const char* s, SizeType n, bool copy) {
    return doc_.RawNumber(s, n, copy) && ended();
  }
  bool String(const char* s, SizeType n, bool copy) { return doc_.String(s, n, copy) && ended(); }
  bool Key(const char* s, SizeType n, bool copy) {
    if (depth_ == 1) {
      key_end_ = stream_.Tell();
    }
    if (track_keys_) {
      keys_.push_back(digest({s, n}));
    }
    return doc_.Key(s, n, copy);
  }
  bool StartObject() {
    root_object_ = root_object_ || depth_ == 0;
    if (track_keys_) {
      objects_.push_back(keys_.size());
    }
    return enter() && doc_.StartObject();
  }
  bool EndObject(SizeType members) {
    --depth_;
    if (track_keys_) {
      compareKeys();
    }
    return doc_.EndObject(members) && ended();
  }
  bool StartArray() { return enter() && doc_.StartArray(); }
  bool EndArray(SizeType elements) {
    --depth_;
    return doc_.EndArray(elements) && ended();
  }

  bool tooDeep() const { return too_deep_; }
  bool maybeRepeated() const { return maybe_repeated_; }

 private:
  /// A key's length and FNV-1a hash: equal keys have equal digests.
  static std::uint64_t digest(std::string_view key) {
    constexpr std::uint64_t kOffset = 14695981039346656037ULL;
    constexpr std::uint64_t kPrime = 1099511628211ULL;
    constexpr unsigned kLengthShift = 48;
    std::uint64_t h = kOffset;
    for (const char c : key) {
      h = (h ^ static_cast<unsigned char>(c)) * kPrime;
    }
    return h ^ (static_cast<std::uint64_t>(key.size()) << kLengthShift);
  }

  /// The object just closed: its keys' digests are compared, then dropped.
  void compareKeys() {
    const std::size_t first = objects_.back();
    objects_.pop_back();
    const auto begin = keys_.begin() + static_cast<std::ptrdiff_t>(first);
    const auto end = keys_.end();
    if (static_cast<std::size_t>(end - begin) <= kPairwiseKeyCheck) {
      for (auto i = begin; i != end && !maybe_repeated_; ++i) {
        maybe_repeated_ = std::find(begin, i, *i) != i;
      }
    } else {
      std::sort(begin, end);
      maybe_repeated_ = maybe_repeated_ || std::adjacent_find(begin, end) != end;
    }
    keys_.erase(begin, end);
  }

  bool enter() {
    if (depth_ == kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    ++depth_;
    return true;
  }

  /// A value ended: one of the root object's members' when it ended at the root's depth. It
  /// began after its key, the colon and any whitespace, none of which reading in place moves.
  bool ended() {
    if (values_ != nullptr && depth_ == 1 && root_object_) {
      values_->push_back(Span{valueStart(stream_.text(), key_end_), stream_.Tell()});
    }
    return true;
  }

  rapidjson::Document& doc_;
  Stream& stream_;
  std::vector<Span>* values_;
  std::size_t depth_ = 0;
  std::size_t key_end_ = 0;  ///< Where the root object's last key ended.
  bool root_object_ = false;
  bool too_deep_ = false;
  const bool track_keys_;
  std::vector<std::uint64_t> keys_;   ///< The digests of the open objects' keys.
  std::vector<std::size_t> objects_;  ///< Where each open object's keys begin in keys_.
  bool maybe_repeated_ = false;       ///< Two keys of an object had the same digest.
};

/// RapidJSON stops at the first NUL, so text after an embedded one would be silently ignored.
bool hasEmbeddedNul(std::string_view text) { return text.find('\0') != std::string_view::npos; }

/// One open array or object of the walk in findTextProblem, and the index of its current child.
struct Frame {
  const Value* container;
  SizeType next = 0;
};

/// The path of the child being visited, e.g. "messages[0].role". Keys on it were checked first.
std::string pathOf(const std::vector<Frame>& frames) {
  std::string path;
  for (const Frame& f : frames) {
    const SizeType at = f.next - 1;
    if (f.container->IsObject()) {
      if (!path.empty()) {
        path.push_back('.');
      }
      path.append(view(f.container->MemberBegin()[at].name));
    } else {
      path.append("[").append(std::to_string(at)).append("]");
    }
  }
  return path;
}

/// The first key that `object` repeats, if any.
const Value* repeatedKey(const Value& object) {
  const SizeType n = object.MemberCount();
  const auto m = object.MemberBegin();
  if (n <= kPairwiseKeyCheck) {
    for (SizeType i = 1; i < n; ++i) {
      const std::string_view name = view(m[i].name);
      for (SizeType j = 0; j < i; ++j) {
        if (view(m[j].name) == name) {
          return &m[i].name;
        }
      }
    }
    return nullptr;
  }
  std::vector<const Value*> names;
  names.reserve(n);
  for (SizeType i = 0; i < n; ++i) {
    names.push_back(&m[i].name);
  }
  std::sort(names.begin(), names.end(),
            [](const Value* a, const Value* b) { return view(*a) < view(*b); });
  const auto it = std::adjacent_find(names.begin(), names.end(),
                                     [](const Value* a, const Value* b) { return *a == *b; });
  return it == names.end() ? nullptr : *it;
}

/// Whether the strings of a document still need their UTF-8 checked.
enum class Utf8 { Check, Known };

/// Walks a parsed document without recursion: every key and string must be valid UTF-8 (unless
/// known to be), and with Keys::Unique no object may repeat a key.
std::optional<ParseFailure> findTextProblem(const Value& root, Keys keys, Utf8 utf8) {
  const bool check = utf8 == Utf8::Check;
  if (!check && keys == Keys::AllowDuplicates) {
    return std::nullopt;
  }
  if (root.IsString()) {
    return !check || text::isValidUtf8(view(root))
               ? std::nullopt
               : std::optional(ParseFailure{"invalid UTF-8", ""});
  }
  constexpr std::size_t kUsualDepth = 16;
  std::vector<Frame> frames;
  frames.reserve(kUsualDepth);
  auto open = [&](const Value& v) -> std::optional<ParseFailure> {
    if (v.IsObject() && keys == Keys::Unique) {
      if (const Value* key = repeatedKey(v)) {
        std::string path = pathOf(frames);
        path.append(path.empty() ? "" : ".").append(text::printable(view(*key)));
        return ParseFailure{"duplicate key \"" + text::printable(view(*key)) + "\"", path};
      }
    }
    if (v.IsObject() || v.IsArray()) {
      frames.push_back(Frame{&v});
    }
    return std::nullopt;
  };
  if (auto failure = open(root)) {
    return failure;
  }
  while (!frames.empty()) {
    Frame& f = frames.back();
    const Value* child = nullptr;
    if (f.container->IsObject()) {
      if (f.next == f.container->MemberCount()) {
        frames.pop_back();
        continue;
      }
      const auto& member = f.container->MemberBegin()[f.next];
      if (check && !text::isValidUtf8(view(member.name))) {
        frames.pop_back();  // The path names the object holding the key, never the key's bytes.
        return ParseFailure{"invalid UTF-8 in a key", pathOf(frames)};
      }
      ++f.next;
      child = &member.value;
    } else {
      if (f.next == f.container->Size()) {
        frames.pop_back();
        continue;
      }
      child = &(*f.container)[f.next++];
    }
    if (check && child->IsString() && !text::isValidUtf8(view(*child))) {
      return ParseFailure{"invalid UTF-8", pathOf(frames)};
    }
    if (auto failure = open(*child)) {
      return failure;
    }
  }
  return std::nullopt;
}

/// What RapidJSON refused, in its words, but for a raw control character inside a string, which
/// it calls an invalid escape.
template <class Stream>
std::string syntaxError(const rapidjson::ParseResult& result, const Stream& stream) {
  const std::size_t at = result.Offset();
  const std::string_view text = stream.text();
  if (result.Code() == rapidjson::kParseErrorStringEscapeInvalid && at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte < 0x20) {
      constexpr std::string_view kHex = "0123456789ABCDEF";
      return std::string("a control character (U+00") + kHex[byte >> 4] + kHex[byte & 0xF] +
             ") must be escaped inside a string";
    }
  }
  return rapidjson::GetParseError_En(result.Code());
}

template <unsigned kFlags, class Stream>
std::optional<ParseFailure> parseStream(rapidjson::Document& doc, Stream& stream, Keys keys,
                                        Utf8 utf8, std::vector<Span>* values = nullptr) {
  rapidjson::ParseResult result;
  bool too_deep = false;
  bool maybe_repeated = false;
  auto generate = [&](rapidjson::Document& target) {
    DepthLimited<Stream> handler(target, stream, values, keys);
    rapidjson::Reader reader;
    result = reader.Parse<kFlags>(stream, handler);
    too_deep = handler.tooDeep();
    maybe_repeated = handler.maybeRepeated();
    return !result.IsError();
  };
  doc.SetNull();
  doc.Populate(generate);
  std::optional<ParseFailure> problem;
  if (too_deep) {
    problem = ParseFailure{
        "it nests deeper than " + std::to_string(kMaxDepth) + " arrays and objects", ""};
  } else if (result.IsError()) {
    problem = ParseFailure{
        syntaxError(result, stream) + " at offset " + std::to_string(result.Offset()), ""};
  } else if (utf8 == Utf8::Check || maybe_repeated) {
    problem = findTextProblem(doc, keys, utf8);
  }
  if (problem) {
    doc.SetNull();
    if (values != nullptr) {
      values->clear();
    }
  }
  return problem;
}

std::optional<ParseFailure> nulFailure() { return ParseFailure{"it contains a NUL byte", ""}; }

}  // namespace

std::size_t valueStart(std::string_view text, std::size_t key_end) {
  std::size_t at = key_end;
  while (at < text.size() && (text[at] == ':' || text[at] == ' ' || text[at] == '\t' ||
                              text[at] == '\n' || text[at] == '\r')) {
    ++at;
  }
  return at;
}

bool decodesToValidUtf8(std::string_view text) {
  if (!text::isValidUtf8(text)) {
    return false;
  }
  constexpr char kLowerCase = 0x20;
  for (std::size_t at = text.find('\\'); at != std::string_view::npos;
       at = text.find('\\', at + 1)) {
    if (at + 3 < text.size() && text[at + 1] == 'u' && (text[at + 2] | kLowerCase) == 'd') {
      const char third = static_cast<char>(text[at + 3] | kLowerCase);
      if (third >= 'c' && third <= 'f') {
        return false;
      }
    }
  }
  return true;
}

std::optional<ParseFailure> parse(rapidjson::Document& doc, const std::string& text, Keys keys) {
  if (hasEmbeddedNul(text)) {
    doc.SetNull();
    return nulFailure();
  }
  const Utf8 utf8 = decodesToValidUtf8(text) ? Utf8::Known : Utf8::Check;
  TextStream stream(text);
  return parseStream<rapidjson::kParseDefaultFlags>(doc, stream, keys, utf8);
}

std::optional<ParseFailure> parseInPlace(rapidjson::Document& doc, std::string& text, Keys keys,
                                         std::vector<Span>* values) {
  if (values != nullptr) {
    constexpr std::size_t kUsualMembers = 16;
    values->clear();
    values->reserve(kUsualMembers);
  }
  if (hasEmbeddedNul(text)) {
    doc.SetNull();
    return nulFailure();
  }
  const Utf8 utf8 = decodesToValidUtf8(text) ? Utf8::Known : Utf8::Check;  // Before it moves.
  InPlaceStream stream(text);
  return parseStream<rapidjson::kParseInsituFlag>(doc, stream, keys, utf8, values);
}

std::string serialize(const rapidjson::Value& v) {
  Writer w;
  w.value(v);
  return w.take();
}

const rapidjson::Value* member(const rapidjson::Value& object, std::string_view name) {
  if (!object.IsObject()) {
    return nullptr;
  }
  const auto it =
      object.FindMember(rapidjson::Value(rapidjson::StringRef(name.data(), name.size())));
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::optional<std::string_view> stringMember(const rapidjson::Value& object,
                                             std::string_view name) {
  const rapidjson::Value* v = member(object, name);
  if (v == nullptr || !v->IsString()) {
    return std::nullopt;
  }
  return view(*v);
}

std::optional<std::int64_t> intMember(const rapidjson::Value& object, std::string_view name) {
  const rapidjson::Value* v = member(object, name);
  if (v == nullptr || !v->IsInt64()) {
    return std::nullopt;
  }
  return v->GetInt64();
}

std::optional<std::int64_t> countMember(const rapidjson::Value& object, std::string_view name) {
  const auto n = intMember(object, name);
  return n && *n >= 0 ? n : std::nullopt;
}

namespace {

/// Appends to a std::string or a RapidJSON buffer.
void put(std::string& out, std::string_view s) { out.append(s); }
void put(std::string& out, char c) { out.push_back(c); }
void put(rapidjson::StringBuffer& out, std::string_view s) {
  if (!s.empty()) {  // Push(0) may be a null pointer, which memcpy may not take.
    std::memcpy(out.Push(s.size()), s.data(), s.size());
  }
}
void put(rapidjson::StringBuffer& out, char c) { out.Put(c); }

/// Writing at a pointer, into room the caller has made.
struct At {
  char* p;
};
void put(At& out, std::string_view s) {
  if (!s.empty()) {  // An empty view's data may be null, which memcpy may not take.
    std::memcpy(out.p, s.data(), s.size());
    out.p += s.size();
  }
}
void put(At& out, char c) { *out.p++ = c; }

/// Room for `n` more bytes at the end of `out`, and where they start.
char* room(std::string& out, std::size_t n) {
  const std::size_t at = out.size();
  out.resize(at + n);
  return out.data() + at;
}
char* room(rapidjson::StringBuffer& out, std::size_t n) { return out.Push(n); }
char* room(At& out, std::size_t n) {
  char* at = out.p;
  out.p += n;
  return at;
}

/// A string with nothing to escape, in its quotes, with one reservation.
template <class Out>
void putPlain(Out& out, std::string_view s) {
  char* p = room(out, s.size() + 2);
  p[0] = '"';
  if (!s.empty()) {  // An empty view's data may be null, which memcpy may not take.
    std::memcpy(p + 1, s.data(), s.size());
  }
  p[s.size() + 1] = '"';
}

template <class Out>
void quote(std::string_view s, Out& out) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  std::size_t plain = text::jsonPlainPrefix(s);
  if (plain == s.size()) {  // Most strings, and every key we write.
    putPlain(out, s);
    return;
  }
  put(out, '"');
  for (;;) {
    put(out, s.substr(0, plain));  // Copied whole.
    if (plain == s.size()) {
      break;
    }
    const char c = s[plain];
    s.remove_prefix(plain + 1);
    switch (c) {
      case '"':
        put(out, "\\\"");
        break;
      case '\\':
        put(out, "\\\\");
        break;
      case '\b':
        put(out, "\\b");
        break;
      case '\f':
        put(out, "\\f");
        break;
      case '\n':
        put(out, "\\n");
        break;
      case '\r':
        put(out, "\\r");
        break;
      case '\t':
        put(out, "\\t");
        break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        const char escape[] = {'\\', 'u', '0', '0', kHex[byte >> 4], kHex[byte & 0xF]};
        put(out, std::string_view(escape, sizeof escape));
      }
    }
    plain = text::jsonPlainPrefix(s);
  }
  put(out, '"');
}

}  // namespace

void appendQuoted(std::string_view s, std::string& out) { quote(s, out); }
void appendQuoted(std::string_view s, rapidjson::StringBuffer& out) { quote(s, out); }
char* writeQuoted(std::string_view s, char* out) {
  At at{out};
  quote(s, at);
  return at.p;
}

void Writer::value(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kStringType:
      string(view(v));
      return;
    case rapidjson::kObjectType:
      startObject();
      for (const auto& m : v.GetObject()) {
        key(view(m.name));
        value(m.value);
      }
      endObject();
      return;
    case rapidjson::kArrayType:
      startArray();
      for (const auto& e : v.GetArray()) {
        value(e);
      }
      endArray();
      return;
    case rapidjson::kNullType:
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
    case rapidjson::kNumberType:
      v.Accept(w_);  // As RapidJSON writes them (a number as it was read: integer or double).
      return;
  }
}

}  // namespace tollgate::json
