// Thin helpers over RapidJSON: a compact writer for building response bodies on the hot path,
// and value accessors used by the decoders.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate::json {

/// Appends `s` to `out` as a JSON string (declared here for the writer; documented below).
void appendQuoted(std::string_view s, std::string& out);
void appendQuoted(std::string_view s, rapidjson::StringBuffer& out);

/// Appends JSON tokens to an in-memory buffer; take() returns the text. RapidJSON keeps the
/// structure (the commas and colons); strings and keys are quoted by appendQuoted, a plain run at
/// a time: RapidJSON's SSE2 scan writes the bytes 0x1A to 0x1F raw, which JSON must escape.
class Writer {
 public:
  Writer() : w_(buf_) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void startObject() { w_.StartObject(); }
  void endObject() { w_.EndObject(); }
  void startArray() { w_.StartArray(); }
  void endArray() { w_.EndArray(); }
  void key(std::string_view k) { quoted(k); }
  void string(std::string_view s) { quoted(s); }
  void integer(std::int64_t v) { w_.Int64(v); }
  void number(double v) { w_.Double(v); }
  void boolean(bool v) { w_.Bool(v); }
  void null() { w_.Null(); }
  /// A number already written as JSON text, e.g. an exact decimal amount.
  void rawNumber(std::string_view text) {
    w_.RawValue("", 0, rapidjson::kNumberType);
    std::memcpy(buf_.Push(text.size()), text.data(), text.size());
  }
  /// Writes already-serialised JSON as one value, copied whole (RapidJSON's RawValue copies it
  /// byte by byte, after the separator this writes).
  void raw(std::string_view json) {
    w_.RawValue("", 0, rapidjson::kObjectType);
    std::memcpy(buf_.Push(json.size()), json.data(), json.size());
  }
  /// A document's value as RapidJSON would write it.
  void value(const rapidjson::Value& v);

  void field(std::string_view k, std::string_view v) {
    key(k);
    string(v);
  }
  void field(std::string_view k, const char* v) {
    key(k);
    string(v);
  }
  void field(std::string_view k, std::int64_t v) {
    key(k);
    integer(v);
  }
  void field(std::string_view k, int v) {
    key(k);
    integer(v);
  }
  void field(std::string_view k, double v) {
    key(k);
    number(v);
  }
  void field(std::string_view k, bool v) {
    key(k);
    boolean(v);
  }
  void field(std::string_view k, const std::vector<std::string>& v) {
    key(k);
    startArray();
    for (const std::string& s : v) {
      string(s);
    }
    endArray();
  }

  std::string take() { return std::string(buf_.GetString(), buf_.GetSize()); }

 private:
  void quoted(std::string_view s) {
    w_.RawValue("", 0, rapidjson::kStringType);  // The separator, and the structure's count.
    appendQuoted(s, buf_);
  }

  rapidjson::StringBuffer buf_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
};

/// Documents nest at most this many arrays and objects deep. Deeper text is refused while it is
/// read, so neither the reader nor anything that walks or writes a document recurses further.
inline constexpr std::size_t kMaxDepth = 128;

/// Whether an object may repeat a key. Readers disagree on which copy wins (we would read the
/// last, an upstream the first), so a client's request may not.
enum class Keys { AllowDuplicates, Unique };

/// Why a text was refused, and where in it.
struct ParseFailure {
  std::string reason;  ///< e.g. "Missing a comma or '}' after an object member. at offset 12"
  std::string path;    ///< e.g. "messages[0].role"; empty for the text as a whole
};

/// Parses `text` into `doc`. Refuses a syntax error, an embedded NUL, nesting deeper than
/// kMaxDepth, strings or keys that are not valid UTF-8 (including lone surrogate escapes), and,
/// with Keys::Unique, a repeated key in any object. Reads the string's terminating NUL, which
/// lets RapidJSON scan with SIMD.
std::optional<ParseFailure> parse(rapidjson::Document& doc, const std::string& text,
                                  Keys keys = Keys::AllowDuplicates);

/// Whether every string read from the JSON `text` is valid UTF-8, whatever the text holds: the
/// text itself is, and none of its escapes is a low surrogate (backslash-u DC00 to DFFF), the
/// one escape RapidJSON decodes to bytes that are not UTF-8 (a high one without its pair it
/// refuses). A string's raw runs are then valid, and every other escape decodes to a valid
/// character. One pass over the text costs less than one over each string; a text this cannot
/// vouch for (an emoji escaped as a surrogate pair, say) has its strings checked one by one.
bool decodesToValidUtf8(std::string_view text);

/// Where a member's value starts in JSON `text`, given where its key ended: past the colon and
/// any whitespace.
std::size_t valueStart(std::string_view text, std::size_t key_end);

/// Where a value lies in the text it was read from: the bytes [begin, end), as they were sent.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

/// Parses `text` in place (RapidJSON's in-situ mode): strings are unescaped inside `text`, which
/// `doc` then points into, so `text` must outlive `doc` and must not be resized. Same rules as
/// parse(). When `values` is given and the text is an object, it receives where each member's
/// value was in the text before it was parsed, in the document's member order.
std::optional<ParseFailure> parseInPlace(rapidjson::Document& doc, std::string& text,
                                         Keys keys = Keys::AllowDuplicates,
                                         std::vector<Span>* values = nullptr);

/// Serialises one value compactly.
std::string serialize(const rapidjson::Value& v);

/// Returns the member named `name` or nullptr.
const rapidjson::Value* member(const rapidjson::Value& object, std::string_view name);

/// The string at `name`, if it is present and a string.
std::optional<std::string_view> stringMember(const rapidjson::Value& object, std::string_view name);

/// The integer at `name`, if it is present and an integer.
std::optional<std::int64_t> intMember(const rapidjson::Value& object, std::string_view name);

/// The count at `name`: present, an integer, not negative and within int64; nullopt otherwise,
/// so that a count an upstream wrote wrong (a string, a float, -1, 2^64) is never read as some
/// other number.
std::optional<std::int64_t> countMember(const rapidjson::Value& object, std::string_view name);

/// Appends `s` to `out` as a JSON string: quoted, `"`, `\\` and control characters escaped (a
/// short escape where JSON has one, else `\\u00XX` in upper case), every other byte as it is.
/// Its output never changes: the inference cache's keys are written with it.
void appendQuoted(std::string_view s, std::string& out);

/// The most bytes `s` of `n` bytes takes quoted: every byte as `\u00XX`, and the quotes.
constexpr std::size_t maxQuotedSize(std::size_t n) { return 6 * n + 2; }

/// Writes `s` at `out` as appendQuoted would append it; `out` has room for maxQuotedSize(). Returns
/// the end of what was written.
char* writeQuoted(std::string_view s, char* out);

/// A view of a string value.
inline std::string_view view(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}

}  // namespace tollgate::json
