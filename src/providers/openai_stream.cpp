#include "providers/openai_stream.hpp"

#include <array>
#include <cstring>
#include <limits>

#include "core/json.hpp"
#include "core/text.hpp"

namespace tollgate::providers {
namespace {

using rapidjson::SizeType;

/// The top-level members the output keeps.
enum Field { kId, kCreated, kFingerprint, kChoices, kUsage, kFieldCount };

/// JSON value types, as far as the checks below need them.
enum class Type { None, String, Integer, OtherScalar, Object, Array };

struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  Type type = Type::None;
};

/// A RapidJSON input stream over a view. Unlike StringStream it is not copied while a token is
/// read, so its position is exact at every reader event; past the end it reads NUL.
class ViewStream {
 public:
  using Ch = char;
  explicit ViewStream(std::string_view text)
      : p_(text.data()), begin_(p_), end_(p_ + text.size()) {}
  Ch Peek() const { return p_ == end_ ? '\0' : *p_; }
  Ch Take() { return p_ == end_ ? '\0' : *p_++; }
  std::size_t Tell() const { return static_cast<std::size_t>(p_ - begin_); }
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

/// Validates an event while noting where each top-level member's value lies. Offsets come from
/// the input stream's position, which at each reader event is just past the token it reports.
class Scanner {
 public:
  Scanner(std::string_view text, const ViewStream& in) : text_(text), in_(in) {}

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
    return text::isValidUtf8({s, n}) && notACount() && scalar(Type::String);
  }
  bool Key(const char* s, SizeType n, bool) {
    if (!text::isValidUtf8({s, n})) {
      return false;
    }
    const std::string_view key(s, n);
    if (depth_ == 1) {
      field_ = fieldOf(key);
      error_ = error_ || key == "error";
      // The value starts after the ':' that follows the key, past any JSON whitespace (a
      // carriage return included: only line feeds send an event to the slow path).
      std::size_t at = in_.Tell();
      while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t' || text_[at] == '\r' ||
                                   text_[at] == '\n' || text_[at] == ':')) {
        ++at;
      }
      value_begin_ = at;
    } else if (depth_ == 2 && field_ == kUsage) {
      usage_key_ = key == "prompt_tokens" ? kPrompt : key == "completion_tokens" ? kCompletion : -1;
      details_ = key == "prompt_tokens_details"       ? kPromptDetails
                 : key == "completion_tokens_details" ? kCompletionDetails
                                                      : kNoDetails;
      (details_ == kPromptDetails ? counts_.prompt_details : counts_.completion_details) |=
          details_ != kNoDetails;
    } else if (depth_ == 3 && field_ == kUsage) {
      usage_key_ = details_ == kPromptDetails
                       ? (key == "cached_tokens" ? kCached : key == "audio_tokens" ? kAudioIn : -1)
                   : details_ == kCompletionDetails
                       ? (key == "reasoning_tokens" ? kReasoning
                          : key == "audio_tokens"   ? kAudioOut
                                                    : -1)
                       : -1;
    }
    return true;
  }
  bool StartObject() { return notACount() && open(Type::Object); }
  bool StartArray() { return notACount() && open(Type::Array); }
  bool EndObject(SizeType) { return close(); }
  bool EndArray(SizeType elements) {
    if (depth_ == 2 && field_ == kChoices) {
      choices_ = elements;
    }
    return close();
  }

  const Span& span(Field f) const { return spans_[f]; }
  bool hasError() const { return error_; }
  SizeType choices() const { return choices_; }
  bool sawUsage() const { return spans_[kUsage].type == Type::Object; }
  /// The usage object's counts, when both totals are there and each count is one
  /// (json::countMember); a detail left out is 0.
  std::optional<openai::Usage> usage() const {
    constexpr unsigned kTotals = (1U << kPrompt) | (1U << kCompletion);
    if (bad_count_ || (seen_ & kTotals) != kTotals) {
      return std::nullopt;
    }
    return counts_;
  }

 private:
  static int fieldOf(std::string_view key) {
    if (key == "id") return kId;
    if (key == "created") return kCreated;
    if (key == "system_fingerprint") return kFingerprint;
    if (key == "choices") return kChoices;
    if (key == "usage") return kUsage;
    return kFieldCount;
  }

  /// The counts the usage object gives, and where in it they lie.
  enum Count { kPrompt, kCompletion, kCached, kAudioIn, kReasoning, kAudioOut };
  enum Details { kNoDetails, kPromptDetails, kCompletionDetails };

  std::int64_t& count(int which) {
    switch (which) {
      case kPrompt: return counts_.prompt_tokens;
      case kCompletion: return counts_.completion_tokens;
      case kCached: return counts_.cached_tokens;
      case kAudioIn: return counts_.audio_prompt_tokens;
      case kReasoning: return counts_.reasoning_tokens;
      default: return counts_.audio_completion_tokens;
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

  bool scalar(Type t) {
    if (depth_ == 0 || inChoices()) {
      return false;  // The event must be an object, and so must each choice.
    }
    return depth_ != 1 || note(t);
  }

  /// At the level of the elements of `choices`.
  bool inChoices() const { return depth_ == 2 && field_ == kChoices && opened_ == Type::Array; }

  bool open(Type t) {
    if (depth_ == json::kMaxDepth || ((depth_ == 0 || inChoices()) && t != Type::Object)) {
      return false;  // Too deep, or an event or a choice that is not an object.
    }
    if (depth_ == 1) {
      opened_ = t;
    }
    ++depth_;
    return true;
  }

  bool close() {
    --depth_;
    return depth_ != 1 || note(opened_);
  }

  /// Records where a kept member's value lies; a kept member may appear only once (readers
  /// disagree on which copy of a repeated key wins).
  bool note(Type t) {
    if (field_ == kFieldCount) {
      return true;
    }
    if (spans_[field_].type != Type::None) {
      return false;
    }
    spans_[field_] = Span{value_begin_, in_.Tell(), t};
    return true;
  }

  std::string_view text_;
  const ViewStream& in_;
  std::size_t depth_ = 0;
  int field_ = kFieldCount;
  std::size_t value_begin_ = 0;
  Type opened_ = Type::None;
  std::array<Span, kFieldCount> spans_{};
  bool error_ = false;
  int usage_key_ = -1;  ///< The Count the value read next is, -1: none.
  Details details_ = kNoDetails;
  SizeType choices_ = 0;
  usage::Counts counts_;
  unsigned seen_ = 0;  ///< The Counts read, a bit each.
  bool bad_count_ = false;
};

std::string escaped(std::string_view key, std::string_view value) {
  json::Writer w;
  w.string(value);
  return std::string(",\"").append(key).append("\":").append(w.take());
}

}  // namespace

ChunkRewriter::ChunkRewriter(const openai::ResponseMeta& meta)
    : meta_(meta),
      after_created_(escaped("model", meta.model) + escaped("episode_id", meta.episode_id) +
                     (meta.variant_name.empty()
                          ? std::string()
                          : escaped(openai::kVariantMember, meta.variant_name))),
      after_fingerprint_(escaped("service_tier", meta.service_tier)) {}

Result<ChunkRewriter::Kind> ChunkRewriter::rewrite(std::string_view data, std::string& out,
                                                   std::optional<openai::Usage>& usage) {
  // Line breaks may separate tokens (they join multi-line data): the output must not carry
  // them, so such events take the slow path, which re-encodes.
  if (std::memchr(data.data(), '\n', data.size()) != nullptr) {
    return Kind::Other;
  }
  ViewStream in(data);
  Scanner scan(data, in);
  const bool ok = reader_.Parse(in, scan) && in.Tell() == data.size();
  if (!ok) {
    return Error{ErrorKind::UpstreamError,
                 "the upstream answered with a stream event that is not a JSON object", ""};
  }
  if (scan.hasError()) {
    return Kind::Error;
  }
  const bool first_usage = scan.sawUsage() && !usage_read_;
  if (first_usage) {
    usage = scan.usage();  // nullopt when not to be trusted: the charge is then estimated.
    usage_read_ = true;
  }
  const bool keep_usage = meta_.include_usage && first_usage;
  if (scan.sawUsage() && !keep_usage && scan.choices() == 0) {
    return Kind::UsageOnly;
  }
  const auto raw = [&](Field f, Type want, std::string_view fallback) {
    const Span& s = scan.span(f);
    const std::string_view value = data.substr(s.begin, s.end - s.begin);
    return s.type == want && value != "\"\"" ? value : fallback;
  };
  out.append("data: {\"id\":")
      .append(raw(kId, Type::String, "\"\""))
      .append(",\"object\":\"chat.completion.chunk\",\"created\":")
      .append(raw(kCreated, Type::Integer, "0"))
      .append(after_created_)
      .append(",\"system_fingerprint\":")
      .append(raw(kFingerprint, Type::String, "\"tollgate\""))
      .append(after_fingerprint_)
      .append(",\"choices\":")
      .append(raw(kChoices, Type::Array, "[]"));
  if (keep_usage) {
    const std::string_view u = raw(kUsage, Type::Object, "{}");
    out.append(",\"usage\":");
    if (meta_.pricing && usage) {
      // Our cost member goes in before the object's closing brace.
      const bool empty = u.find_first_not_of(" \t\r", 1) == u.size() - 1;
      out.append(u.substr(0, u.size() - 1))
          .append(empty ? "\"" : ",\"")
          .append(openai::kCostMember)
          .append("\":")
          .append(openai::costText(*meta_.pricing, *usage))
          .append("}");
    } else {
      out.append(u);
    }
    if (meta_.include_raw_usage) {
      out.append(",\"tollgate::raw_usage\":").append(raw(kUsage, Type::Object, "{}"));
    }
  }
  if (meta_.include_raw_response) {
    out.append(",\"tollgate::raw_response\":").append(data);
  }
  out.append("}\n\n");
  return Kind::Chunk;
}

}  // namespace tollgate::providers
