#include "core/json.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <vector>

#include "core/text.hpp"

namespace tollgate::json {

namespace {

using rapidjson::SizeType;
using rapidjson::Value;

/// Objects with more members than this are checked for repeated keys by sorting, not pairwise.
constexpr SizeType kPairwiseKeyCheck = 16;

/// Forwards RapidJSON's reader events to the document, refusing to open an array or object
/// deeper than kMaxDepth. Refusing at the opening event also bounds the reader's recursion.
class DepthLimited {
 public:
  explicit DepthLimited(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned i) { return doc_.Uint(i); }
  bool Int64(std::int64_t i) { return doc_.Int64(i); }
  bool Uint64(std::uint64_t i) { return doc_.Uint64(i); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, SizeType n, bool copy) { return doc_.RawNumber(s, n, copy); }
  bool String(const char* s, SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return enter() && doc_.StartObject(); }
  bool EndObject(SizeType members) {
    --depth_;
    return doc_.EndObject(members);
  }
  bool StartArray() { return enter() && doc_.StartArray(); }
  bool EndArray(SizeType elements) {
    --depth_;
    return doc_.EndArray(elements);
  }

  bool tooDeep() const { return too_deep_; }

 private:
  bool enter() {
    if (depth_ == kMaxDepth) {
      too_deep_ = true;
      return false;
    }
    ++depth_;
    return true;
  }

  rapidjson::Document& doc_;
  std::size_t depth_ = 0;
  bool too_deep_ = false;
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
      for (SizeType j = 0; j < i; ++j) {
        if (m[i].name == m[j].name) {
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

/// Walks a parsed document without recursion: every key and string must be valid UTF-8, and
/// with Keys::Unique no object may repeat a key.
std::optional<ParseFailure> findTextProblem(const Value& root, Keys keys) {
  if (root.IsString()) {
    return text::isValidUtf8(view(root)) ? std::nullopt
                                         : std::optional(ParseFailure{"invalid UTF-8", ""});
  }
  std::vector<Frame> frames;
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
      if (!text::isValidUtf8(view(member.name))) {
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
    if (child->IsString() && !text::isValidUtf8(view(*child))) {
      return ParseFailure{"invalid UTF-8", pathOf(frames)};
    }
    if (auto failure = open(*child)) {
      return failure;
    }
  }
  return std::nullopt;
}

template <unsigned kFlags, class Stream>
std::optional<ParseFailure> parseStream(rapidjson::Document& doc, Stream& stream, Keys keys) {
  rapidjson::ParseResult result;
  bool too_deep = false;
  auto generate = [&](rapidjson::Document& target) {
    DepthLimited handler(target);
    rapidjson::Reader reader;
    result = reader.Parse<kFlags>(stream, handler);
    too_deep = handler.tooDeep();
    return !result.IsError();
  };
  doc.SetNull();
  doc.Populate(generate);
  if (too_deep) {
    return ParseFailure{"it nests deeper than " + std::to_string(kMaxDepth) + " arrays and objects",
                        ""};
  }
  if (result.IsError()) {
    return ParseFailure{std::string(rapidjson::GetParseError_En(result.Code())) + " at offset " +
                            std::to_string(result.Offset()),
                        ""};
  }
  auto problem = findTextProblem(doc, keys);
  if (problem) {
    doc.SetNull();
  }
  return problem;
}

std::optional<ParseFailure> nulFailure() { return ParseFailure{"it contains a NUL byte", ""}; }

}  // namespace

std::optional<ParseFailure> parse(rapidjson::Document& doc, const std::string& text, Keys keys) {
  if (hasEmbeddedNul(text)) {
    doc.SetNull();
    return nulFailure();
  }
  rapidjson::StringStream stream(text.c_str());
  return parseStream<rapidjson::kParseDefaultFlags>(doc, stream, keys);
}

std::optional<ParseFailure> parseInPlace(rapidjson::Document& doc, std::string& text, Keys keys) {
  if (hasEmbeddedNul(text)) {
    doc.SetNull();
    return nulFailure();
  }
  rapidjson::InsituStringStream stream(text.data());
  return parseStream<rapidjson::kParseInsituFlag>(doc, stream, keys);
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

template <class Out>
void quote(std::string_view s, Out& out) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  put(out, '"');
  for (;;) {
    const std::size_t plain = text::jsonPlainPrefix(s);  // Copied whole.
    put(out, s.substr(0, plain));
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
  }
  put(out, '"');
}

}  // namespace

void appendQuoted(std::string_view s, std::string& out) { quote(s, out); }
void appendQuoted(std::string_view s, rapidjson::StringBuffer& out) { quote(s, out); }

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
