// The inference cache's key (cache/cache_key) over arbitrary chat requests, and its replay
// (cache/chat_replay) over the same bytes read as a stream. Invariants: an accepted request
// written differently (pretty-printed, members in reverse order, every non-ASCII character
// escaped, numbers as the client wrote them) is accepted again with the same key; the canonical
// text of its body is JSON whose canonical text is itself; a stream that assembles into a
// completion gives valid JSON, restamped and streamed again too, and that stream assembles.
#include <rapidjson/prettywriter.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include "cache/cache_key.hpp"
#include "cache/chat_replay.hpp"
#include "core/json.hpp"
#include "fuzz_check.hpp"
#include "openai/chat_request.hpp"
#include "openai/sse.hpp"

namespace {

using namespace tollgate;
using fuzz::check;
using rapidjson::SizeType;

/// Marks a string of the document below as a number's source text: the byte never starts a
/// string of valid UTF-8, which every accepted string is.
constexpr char kNumberMark = '\xFF';

/// Builds a document whose numbers are kept as their text (behind kNumberMark), so that the
/// request can be written again with each number spelled as the client spelled it: the point is
/// the key's indifference to formatting, not the parser's rounding of long numbers.
class NumbersAsText {
 public:
  explicit NumbersAsText(rapidjson::Document& doc) : doc_(doc) {}

  bool Null() { return doc_.Null(); }
  bool Bool(bool b) { return doc_.Bool(b); }
  bool Int(int i) { return doc_.Int(i); }
  bool Uint(unsigned i) { return doc_.Uint(i); }
  bool Int64(std::int64_t i) { return doc_.Int64(i); }
  bool Uint64(std::uint64_t i) { return doc_.Uint64(i); }
  bool Double(double d) { return doc_.Double(d); }
  bool RawNumber(const char* s, SizeType n, bool) {
    std::string text(1, kNumberMark);
    text.append(s, n);
    return doc_.String(text.data(), static_cast<SizeType>(text.size()), true);
  }
  bool String(const char* s, SizeType n, bool copy) { return doc_.String(s, n, copy); }
  bool Key(const char* s, SizeType n, bool copy) { return doc_.Key(s, n, copy); }
  bool StartObject() { return doc_.StartObject(); }
  bool EndObject(SizeType n) { return doc_.EndObject(n); }
  bool StartArray() { return doc_.StartArray(); }
  bool EndArray(SizeType n) { return doc_.EndArray(n); }

 private:
  rapidjson::Document& doc_;
};

using Pretty =
    rapidjson::PrettyWriter<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::ASCII<>>;

/// Writes `v` pretty-printed, object members in reverse order. Accepted requests nest at most
/// json::kMaxDepth deep, which bounds the recursion.
void writeReversed(const rapidjson::Value& v, Pretty& w) {
  if (v.IsObject()) {
    w.StartObject();
    for (auto m = v.MemberEnd(); m != v.MemberBegin();) {
      --m;
      w.Key(m->name.GetString(), m->name.GetStringLength());
      writeReversed(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const auto& item : v.GetArray()) {
      writeReversed(item, w);
    }
    w.EndArray();
  } else if (v.IsString() && v.GetStringLength() > 0 && v.GetString()[0] == kNumberMark) {
    w.RawValue(v.GetString() + 1, v.GetStringLength() - 1, rapidjson::kNumberType);
  } else {
    v.Accept(w);
  }
}

/// `text` (an accepted request) written as writeReversed writes it.
std::string reformatted(const std::string& text) {
  rapidjson::Document doc;
  auto generate = [&](rapidjson::Document& target) {
    NumbersAsText handler(target);
    rapidjson::StringStream in(text.c_str());
    return !rapidjson::Reader().Parse<rapidjson::kParseNumbersAsStringsFlag>(in, handler).IsError();
  };
  doc.Populate(generate);
  check(doc.IsObject());
  rapidjson::StringBuffer buf;
  Pretty w(buf);
  writeReversed(doc, w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string chatKey(const openai::ChatRequest& req) {
  const cache::KeyParts parts{"team", "/v1/chat/completions", "model", "", cache::kChatIgnored};
  return cache::requestKey(parts, req.body);
}

void checkKey(const std::string& input) {
  std::string body = input;
  auto req = openai::decodeChatRequest(body);
  if (!req) {
    return;
  }
  const std::string key = chatKey(*req);
  check(key.size() == 64);

  std::string again_text = reformatted(input);
  auto again = openai::decodeChatRequest(again_text);
  check(again.ok());
  check(chatKey(*again) == key);

  // The canonical text reads back (at full precision: shortest round-trip digits assume a
  // correctly rounding reader) as itself.
  const std::string canonical = cache::canonicalJson(req->body);
  fuzz::checkJson(canonical);
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseFullPrecisionFlag>(canonical.data(), canonical.size());
  check(!doc.HasParseError());
  check(cache::canonicalJson(doc) == canonical);
}

void checkReplay(const std::string& input) {
  const auto completion = cache::completionFromStream(input);
  if (!completion) {
    return;
  }
  fuzz::checkJson(*completion);
  const cache::Stamp stamp{"chatcmpl-replay", 1, "0190a0b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b", "m"};
  fuzz::checkJson(cache::restampCompletion(*completion, stamp));
  for (const bool usage : {false, true}) {
    const std::string sse = cache::streamFromCompletion(*completion, stamp, usage);
    check(sse.ends_with(openai::kSseDone));
    check(cache::completionFromStream(sse).has_value());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  checkKey(input);
  checkReplay(input);
  return 0;
}
