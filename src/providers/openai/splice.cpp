#include "providers/openai/splice.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::providers::splice {
namespace {

using rapidjson::SizeType;

/// A RapidJSON input stream over a std::string's text. Unlike StringStream it is not copied
/// while a token is read, so its position is exact at every reader event. The NUL a std::string
/// always ends in reads as the end of the text, so a read needs no bound check; a NUL inside the
/// text ends it early, which scan() refuses.
class TerminatedStream {
 public:
  using Ch = char;
  explicit TerminatedStream(const std::string& text)
      : p_(text.c_str()), begin_(p_), end_(p_ + text.size()) {}
  Ch Peek() const { return *p_; }
  Ch Take() { return *p_++; }
  std::size_t Tell() const { return static_cast<std::size_t>(p_ - begin_); }
  /// What is left to read, and a step past `n` bytes of it.
  std::string_view rest() const { return {p_, static_cast<std::size_t>(end_ - p_)}; }
  void skip(std::size_t n) { p_ += n; }
  // Output functions: never called on an input stream.
  Ch* PutBegin() { return nullptr; }
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

 private:
  const char* p_;
  const char* begin_;
  const char* end_;
};

}  // namespace
}  // namespace tollgate::providers::splice

/// A string's plain runs are copied whole, as RapidJSON does for its own StringStream (whose
/// position is stale while a token is read, so the scanner cannot use it); byte by byte, they
/// were the scan's largest cost.
template <>
template <>
inline void rapidjson::Reader::ScanCopyUnescapedString(
    tollgate::providers::splice::TerminatedStream& is, rapidjson::Reader::StackStream<char>& os) {
  const std::string_view rest = is.rest();
  const std::size_t n = std::min<std::size_t>(tollgate::text::jsonPlainPrefix(rest),
                                              std::numeric_limits<rapidjson::SizeType>::max());
  if (n > 0) {  // Push(0) on an empty stack is a null pointer, which memcpy may not take.
    std::memcpy(os.Push(static_cast<rapidjson::SizeType>(n)), rest.data(), n);
    is.skip(n);
  }
}

namespace tollgate::providers::splice {
namespace {

/// The levels of a whole answer's choices, as the depth of open containers inside them: a
/// choice's members, a message's members, a tool call array's elements, a tool call's members.
constexpr std::size_t kChoiceLevel = 3;
constexpr std::size_t kMessageLevel = 4;
constexpr std::size_t kCallsLevel = 5;
constexpr std::size_t kCallLevel = 6;

/// The rules a whole answer's choices follow beyond being objects, as today's decoders had
/// them: each has a message object, and each element of the message's tool_calls array is an
/// object with a function object. Fed the events inside `choices` only.
class ChoiceRules {
 public:
  /// A key at `depth` (the number of containers open around it).
  void key(std::size_t depth, std::string_view k) {
    if (depth == kChoiceLevel) {
      at_message_ = k == "message";
    } else if (depth == kMessageLevel && in_message_) {
      at_calls_ = k == "tool_calls";
    } else if (depth == kCallLevel && in_calls_) {
      at_function_ = k == "function";
    }
  }

  /// A value starting at `depth`: a scalar, or a container opened.
  void value(std::size_t depth, Type t, Fault& fault) {
    if (depth == kChoiceLevel - 1) {
      has_message_ = false;  // A new choice.
      at_message_ = false;
    } else if (depth == kChoiceLevel && at_message_) {
      at_message_ = false;
      in_message_ = t == Type::Object;
      has_message_ = has_message_ || in_message_;
      note(fault, in_message_ ? Fault::None : Fault::ChoiceWithoutMessage);
    } else if (depth == kMessageLevel && in_message_ && at_calls_) {
      at_calls_ = false;
      in_calls_ = t == Type::Array;
    } else if (depth == kCallsLevel && in_calls_) {
      has_function_ = false;
      at_function_ = false;
      note(fault, t == Type::Object ? Fault::None : Fault::ToolCallWithoutFunction);
    } else if (depth == kCallLevel && in_calls_ && at_function_) {
      at_function_ = false;
      has_function_ = t == Type::Object;
      note(fault, has_function_ ? Fault::None : Fault::ToolCallWithoutFunction);
    }
  }

  /// The container open at `depth` + 1 closed.
  void close(std::size_t depth, Fault& fault) {
    if (depth == kChoiceLevel - 1) {
      note(fault, has_message_ ? Fault::None : Fault::ChoiceWithoutMessage);
    } else if (depth == kChoiceLevel) {
      in_message_ = false;
    } else if (depth == kMessageLevel) {
      in_calls_ = false;
    } else if (depth == kCallsLevel && in_calls_) {
      note(fault, has_function_ ? Fault::None : Fault::ToolCallWithoutFunction);
    }
  }

 private:
  static void note(Fault& fault, Fault f) {
    if (fault == Fault::None) {
      fault = f;
    }
  }

  bool at_message_ = false;  ///< The choice's value read next is its message.
  bool in_message_ = false;
  bool has_message_ = false;
  bool at_calls_ = false;  ///< The message's value read next is its tool_calls.
  bool in_calls_ = false;
  bool at_function_ = false;  ///< The tool call's value read next is its function.
  bool has_function_ = false;
};

/// Validates an object while noting where each kept top-level member's value lies. Offsets come
/// from the input stream's position, which at each reader event is just past the token it
/// reports.
class Scanner {
 public:
  Scanner(std::string_view text, const TerminatedStream& in, Shape shape)
      : text_(text), in_(in), shape_(shape), utf8_known_(json::decodesToValidUtf8(text)) {}

  // A null detail is 0, as one left out; a null total is not a count.
  bool Null() { return (depth_ == 3 || notACount()) && scalar(Type::OtherScalar); }
  bool Bool(bool) { return notACount() && scalar(Type::OtherScalar); }
  bool Int(int i) { return integer(i); }
  bool Uint(unsigned i) { return integer(i); }
  bool Int64(std::int64_t i) { return integer(i); }
  // RapidJSON reports every integer from 2^32 up this way, not only those past int64.
  bool Uint64(std::uint64_t i) {
    if (i <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return integer(static_cast<std::int64_t>(i));
    }
    return notACount() && scalar(Type::OtherScalar);
  }
  bool Double(double) { return notACount() && scalar(Type::OtherScalar); }
  bool RawNumber(const char*, SizeType, bool) { return notACount() && scalar(Type::OtherScalar); }
  bool String(const char* s, SizeType n, bool) {
    if (depth_ == 1 && model_key_ && scan_.model.type == Type::None) {
      scan_.model = Span{value_begin_, in_.Tell(), Type::String};
    }
    return validUtf8({s, n}) && notACount() && scalar(Type::String);
  }
  bool Key(const char* s, SizeType n, bool) {
    if (!validUtf8({s, n})) {
      return false;
    }
    const std::string_view key(s, n);
    if (depth_ == 1) {
      field_ = fieldOf(key);
      model_key_ = key == "model";
      scan_.error = scan_.error || key == "error";
      value_begin_ = json::valueStart(text_, in_.Tell());
    } else if (depth_ == 2 && field_ == kUsage) {
      usage_key_ = key == "prompt_tokens" ? kPrompt : key == "completion_tokens" ? kCompletion : -1;
      details_ = key == "prompt_tokens_details"       ? kPromptDetails
                 : key == "completion_tokens_details" ? kCompletionDetails
                                                      : kNoDetails;
      (details_ == kPromptDetails ? counts_.prompt_details : counts_.completion_details) |=
          details_ != kNoDetails;
    } else if (depth_ == 3 && field_ == kUsage) {
      usage_key_ = details_ == kPromptDetails       ? (key == "cached_tokens"  ? kCached
                                                       : key == "audio_tokens" ? kAudioIn
                                                                               : -1)
                   : details_ == kCompletionDetails ? (key == "reasoning_tokens" ? kReasoning
                                                       : key == "audio_tokens"   ? kAudioOut
                                                                                 : -1)
                                                    : -1;
    } else if (checksChoices()) {
      rules_.key(depth_, key);
    }
    return true;
  }
  bool StartObject() { return notACount() && open(Type::Object); }
  bool StartArray() { return notACount() && open(Type::Array); }
  bool EndObject(SizeType) { return close(); }
  bool EndArray(SizeType elements) {
    if (depth_ == 2 && field_ == kChoices) {
      scan_.choices = elements;
    }
    return close();
  }

  /// What the pass found, once the reader has accepted the text.
  Scan take() {
    constexpr unsigned kTotals = (1U << kPrompt) | (1U << kCompletion);
    if (!bad_count_ && (seen_ & kTotals) == kTotals) {
      scan_.usage = counts_;
    }
    return scan_;
  }

 private:
  /// Whether a string read is valid UTF-8: known for them all when the text vouches for them.
  bool validUtf8(std::string_view s) const { return utf8_known_ || text::isValidUtf8(s); }

  static int fieldOf(std::string_view key) {
    if (key == "id") return kId;
    if (key == "created") return kCreated;
    if (key == "system_fingerprint") return kFingerprint;
    if (key == "choices") return kChoices;
    if (key == "usage") return kUsage;
    if (key == "prompt_filter_results") return kPromptFilters;
    return kMemberCount;
  }

  /// The counts the usage object gives, and where in it they lie.
  enum Count { kPrompt, kCompletion, kCached, kAudioIn, kReasoning, kAudioOut };
  enum Details { kNoDetails, kPromptDetails, kCompletionDetails };

  std::int64_t& count(int which) {
    switch (which) {
      case kPrompt:
        return counts_.prompt_tokens;
      case kCompletion:
        return counts_.completion_tokens;
      case kCached:
        return counts_.cached_tokens;
      case kAudioIn:
        return counts_.audio_prompt_tokens;
      case kReasoning:
        return counts_.reasoning_tokens;
      default:
        return counts_.audio_completion_tokens;
    }
  }

  /// Whether the value now read is one of the usage object's counts (a total, or a detail in
  /// one of its details objects).
  bool atCount() const {
    return (depth_ == 2 || (depth_ == 3 && details_ != kNoDetails)) && field_ == kUsage &&
           usage_key_ >= 0;
  }

  /// Notes a usage count that is not a count (a string, a float, an object, ...); always true.
  bool notACount() {
    bad_count_ = bad_count_ || atCount();
    return true;
  }

  bool integer(std::int64_t v) {
    if (atCount()) {
      if (v < 0) {
        bad_count_ = true;
      } else {
        count(usage_key_) = v;
        seen_ |= 1U << usage_key_;
      }
    }
    return scalar(Type::Integer);
  }

  /// Inside a whole answer's `choices` array.
  bool checksChoices() const {
    return shape_ == Shape::Completion && depth_ >= 2 && field_ == kChoices &&
           opened_ == Type::Array;
  }

  bool scalar(Type t) {
    if (depth_ == 0) {
      return false;  // The text must be an object.
    }
    if (inChoices()) {
      fault(Fault::ChoiceNotObject);
    }
    if (checksChoices()) {
      rules_.value(depth_, t, scan_.fault);
    }
    return depth_ != 1 || note(t);
  }

  /// At the level of the elements of `choices`.
  bool inChoices() const { return depth_ == 2 && field_ == kChoices && opened_ == Type::Array; }

  void fault(Fault f) {
    if (scan_.fault == Fault::None) {
      scan_.fault = f;
    }
  }

  bool open(Type t) {
    if (depth_ == json::kMaxDepth || (depth_ == 0 && t != Type::Object)) {
      return false;  // Too deep, or not an object.
    }
    if (inChoices() && t != Type::Object) {
      fault(Fault::ChoiceNotObject);
    }
    if (depth_ == 1) {
      opened_ = t;
    }
    if (checksChoices()) {
      rules_.value(depth_, t, scan_.fault);
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    if (checksChoices()) {
      rules_.close(depth_, scan_.fault);
    }
    return depth_ != 1 || note(opened_);
  }

  /// Records where a kept member's value lies; a kept member may appear only once.
  bool note(Type t) {
    if (field_ == kMemberCount) {
      return true;
    }
    Span& span = scan_.spans[field_];
    if (span.type != Type::None) {
      return false;
    }
    span = Span{value_begin_, in_.Tell(), t};
    return true;
  }

  std::string_view text_;
  const TerminatedStream& in_;
  const Shape shape_;
  const bool utf8_known_;  ///< Every string of the text is valid UTF-8 (json::decodesToValidUtf8).
  Scan scan_;
  ChoiceRules rules_;
  std::size_t depth_ = 0;
  int field_ = kMemberCount;
  bool model_key_ = false;  ///< The top-level value read next is `model`'s.
  std::size_t value_begin_ = 0;
  Type opened_ = Type::None;
  int usage_key_ = -1;  ///< The Count the value read next is, -1: none.
  Details details_ = kNoDetails;
  usage::Counts counts_;
  unsigned seen_ = 0;  ///< The Counts read, a bit each.
  bool bad_count_ = false;
};

/// Appends `,"key":"value"`, the value escaped.
void appendMember(std::string& out, std::string_view key, std::string_view value) {
  out.append(",\"").append(key).append("\":");
  json::appendQuoted(value, out);
}

}  // namespace

std::string_view Scan::value(std::string_view text, Member m, Type want,
                             std::string_view fallback) const {
  const Span& s = spans[m];
  const std::string_view v = text.substr(s.begin, s.end - s.begin);
  return s.type == want && v != "\"\"" ? v : fallback;
}

std::string modelOf(std::string_view text, const Scan& s) {
  if (s.model.type != Type::String) {
    return {};
  }
  const std::string_view quoted = text.substr(s.model.begin, s.model.end - s.model.begin);
  // Without an escape, the bytes between the quotes are the value: the scan read them as a
  // string, so they are valid UTF-8 with no raw control character. Only an escape needs decoding.
  const std::string_view inner = quoted.substr(1, quoted.size() - 2);
  if (inner.find('\\') == std::string_view::npos) {
    return std::string(text::utf8Prefix(inner, openai::kMaxUpstreamModelBytes));
  }
  rapidjson::Document literal;
  if (json::parse(literal, std::string(quoted)) || !literal.IsString()) {
    return {};
  }
  return std::string(text::utf8Prefix(json::view(literal), openai::kMaxUpstreamModelBytes));
}

std::optional<Scan> scan(const std::string& text, Shape shape, rapidjson::Reader& reader) {
  TerminatedStream in(text);
  Scanner scanner(text, in, shape);
  // A NUL inside the text reads as its end: the whole text must have been read.
  if (!reader.Parse(in, scanner) || in.Tell() != text.size()) {
    return std::nullopt;
  }
  return scanner.take();
}

Writer::Writer(const openai::ResponseMeta& meta) : meta_(meta) {
  appendMember(after_created_, "model", meta.model);
  appendMember(after_created_, "episode_id", meta.episode_id);
  if (!meta.variant_name.empty()) {
    appendMember(after_created_, openai::kVariantMember, meta.variant_name);
  }
  appendMember(after_fingerprint_, "service_tier", meta.service_tier);
}

void Writer::head(std::string& out, std::string_view object, std::string_view text,
                  const Scan& s) const {
  out.append("{\"id\":")
      .append(s.value(text, kId, Type::String, "\"\""))
      .append(",\"object\":\"")
      .append(object)
      .append("\",\"created\":")
      .append(s.value(text, kCreated, Type::Integer, "0"))
      .append(after_created_)
      .append(",\"system_fingerprint\":")
      .append(s.value(text, kFingerprint, Type::String, "\"tollgate\""))
      .append(after_fingerprint_)
      .append(",\"choices\":")
      .append(s.value(text, kChoices, Type::Array, "[]"));
  if (s.spans[kPromptFilters].type == Type::Array) {
    out.append(",\"prompt_filter_results\":")
        .append(s.value(text, kPromptFilters, Type::Array, "[]"));
  }
}

void Writer::usage(std::string& out, std::string_view text, const Scan& s,
                   const std::optional<openai::Usage>& counted, std::string_view fallback) const {
  out.append(",\"usage\":");
  if (!s.sawUsage()) {
    out.append(fallback);
    return;
  }
  const std::string_view u = s.value(text, kUsage, Type::Object, "{}");
  if (!meta_.pricing || !counted) {
    out.append(u);
    return;
  }
  // Our cost member goes in before the object's closing brace.
  const bool empty = u.find_first_not_of(" \t\r\n", 1) == u.size() - 1;
  out.append(u.substr(0, u.size() - 1))
      .append(empty ? "\"" : ",\"")
      .append(openai::kCostMember)
      .append("\":")
      .append(openai::costText(*meta_.pricing, *counted))
      .append("}");
}

void Writer::rawUsage(std::string& out, std::string_view raw) const {
  if (meta_.include_raw_usage) {
    out.append(",\"tollgate::raw_usage\":").append(raw);
  }
}

void Writer::close(std::string& out, std::string_view text) const {
  if (meta_.include_raw_response) {
    out.append(",\"tollgate::raw_response\":").append(text);
  }
  out.append("}");
}

}  // namespace tollgate::providers::splice
