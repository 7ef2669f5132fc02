#include "openai/embedding_response.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <system_error>

#include "core/base64.hpp"
#include "core/json.hpp"

namespace tollgate::openai {
namespace {

static_assert(sizeof(float) == 4 && std::numeric_limits<float>::is_iec559);

Error badUpstream(std::string what) {
  return Error{ErrorKind::UpstreamError, "the upstream answered with " + what, ""};
}

void writeHead(json::Writer& w) {
  w.startObject();
  w.field("object", "list");
  w.key("data");
  w.startArray();
}

void writeTail(json::Writer& w, const EmbeddingMeta& meta, const std::optional<Usage>& usage) {
  w.endArray();
  w.field("model", meta.model);
  writeUsage(w, usage.value_or(Usage{}), false, usage ? meta.pricing : std::nullopt);
  w.endObject();
}

/// `v` as a JSON array of float32 values, each in its shortest round-trip form.
std::string floatArray(std::span<const float> v) {
  std::string out = "[";
  char number[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) {
      out += ',';
    }
    const auto end = std::to_chars(number, number + sizeof(number), v[i]).ptr;
    out.append(number, end);
  }
  return out + "]";
}

/// `v` as the client asked for it: a float array, or a JSON string of its base64.
std::string vectorJson(std::span<const float> v, bool base64) {
  return base64 ? "\"" + floatsToBase64(v) + "\"" : floatArray(v);
}

void writeItem(json::Writer& w, std::int64_t index) {
  w.startObject();
  w.field("object", "embedding");
  w.field("index", index);
  w.key("embedding");
}

}  // namespace

std::string floatsToBase64(std::span<const float> values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits = std::bit_cast<std::uint32_t>(values[i]);
    for (std::size_t b = 0; b < sizeof(float); ++b) {
      bytes[i * sizeof(float) + b] = static_cast<char>(bits & 0xFF);
      bits >>= 8;
    }
  }
  return base64::encode(bytes);
}

std::optional<std::vector<float>> base64ToFloats(std::string_view text) {
  const auto bytes = base64::decode(text);
  if (!bytes || bytes->size() % sizeof(float) != 0) {
    return std::nullopt;
  }
  std::vector<float> out(bytes->size() / sizeof(float));
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::uint32_t bits = 0;
    for (std::size_t b = sizeof(float); b-- > 0;) {
      bits = bits << 8 | static_cast<unsigned char>((*bytes)[i * sizeof(float) + b]);
    }
    out[i] = std::bit_cast<float>(bits);
  }
  return out;
}

namespace {

/// Reads an upstream's embedding list event by event (RapidJSON's SAX reader, in place, numbers
/// kept as their text) and writes ours as it goes. A vector the client wants in the form the
/// upstream sent is copied as it is (numbers digit for digit), never converted: parsing and
/// printing 768 floats per input would cost more than all else the gateway does.
class EmbeddingListReader {
 public:
  EmbeddingListReader(const EmbeddingMeta& meta, std::optional<Usage>& usage)
      : meta_(meta), usage_(usage) {
    writeHead(w_);
  }

  /// The error that stopped the reader, if it was not the JSON's syntax.
  const std::optional<Error>& error() const { return error_; }

  Result<std::string> finish() {
    if (!data_seen_) {
      return badUpstream("an embedding list without data");
    }
    if (next_ != meta_.inputs) {
      return badUpstream(wrongIndexes());
    }
    writeTail(w_, meta_, usage_);
    return w_.take();
  }

  bool Null() { return scalar(); }
  bool Bool(bool) { return scalar(); }
  bool Int(int) { return scalar(); }
  bool Uint(unsigned) { return scalar(); }
  bool Int64(std::int64_t) { return scalar(); }
  bool Uint64(std::uint64_t) { return scalar(); }
  bool Double(double) { return scalar(); }

  bool RawNumber(const char* text, rapidjson::SizeType size, bool) {
    const std::string_view number(text, size);
    if (skip_ > 0) {
      return true;
    }
    switch (at_) {
      case At::Vector:
        if (meta_.base64) {
          float f = 0;
          std::from_chars(number.data(), number.data() + number.size(), f);
          floats_.push_back(f);
        } else {
          vector_ += vector_.size() > 1 ? "," : "";
          vector_ += number;
        }
        return true;
      case At::Item:
        if (key_ != Member::Index) {
          return scalar();
        }
        index_ = integer(number);
        return index_ ? true : fail(wrongIndexes());
      case At::Usage:
        if (key_ == Member::PromptTokens) {
          prompt_tokens_ = integer(number);
        } else if (key_ == Member::TotalTokens) {
          total_tokens_ = integer(number);
        }
        return true;
      default:
        return scalar();
    }
  }

  bool String(const char* text, rapidjson::SizeType size, bool) {
    if (skip_ == 0 && at_ == At::Item && key_ == Member::Embedding) {
      return base64Vector(std::string_view(text, size));
    }
    return scalar();
  }

  bool Key(const char* text, rapidjson::SizeType size, bool) {
    const std::string_view name(text, size);
    if (skip_ > 0) {
      return true;
    }
    key_ = Member::Other;
    if (at_ == At::Top) {
      key_ = name == "data" ? Member::Data : name == "usage" ? Member::Usage : Member::Other;
    } else if (at_ == At::Item) {
      key_ = name == "index"       ? Member::Index
             : name == "embedding" ? Member::Embedding
                                   : Member::Other;
    } else if (at_ == At::Usage) {
      key_ = name == "prompt_tokens"  ? Member::PromptTokens
             : name == "total_tokens" ? Member::TotalTokens
                                      : Member::Other;
    }
    return true;
  }

  bool StartObject() {
    if (!enter()) {
      return false;
    }
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    switch (at_) {
      case At::Start:
        at_ = At::Top;
        return true;
      case At::Data:
        at_ = At::Item;
        key_ = Member::Other;
        index_.reset();
        has_vector_ = false;
        return true;
      case At::Top:
        if (key_ == Member::Usage) {
          at_ = At::Usage;
          usage_ = Usage{};
          return true;
        }
        break;
      case At::Vector:
        return fail("an embedding holding something other than numbers");
      default:
        break;
    }
    return startSkipping();
  }

  bool EndObject(rapidjson::SizeType) {
    --depth_;
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    if (at_ == At::Item) {
      if (!has_vector_) {
        return fail("an embedding item without an embedding");
      }
      const std::int64_t index = index_.value_or(position_);
      ++position_;
      if (!place(index)) {
        return false;
      }
      at_ = At::Data;
    } else if (at_ == At::Usage) {
      // The prompt's count (else the total's: an embedding generates nothing), or no usage to
      // trust: the charge is then estimated and flagged, never 0.
      const auto count = [](std::optional<std::int64_t> n) {
        return n && *n >= 0 ? n : std::nullopt;
      };
      const auto tokens = count(prompt_tokens_) ? count(prompt_tokens_) : count(total_tokens_);
      if (tokens) {
        usage_ = usage::of(*tokens, 0);
      } else {
        usage_.reset();
      }
      at_ = At::Top;
    } else {
      at_ = At::Done;
    }
    return true;
  }

  bool StartArray() {
    if (!enter()) {
      return false;
    }
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (at_ == At::Top && key_ == Member::Data) {
      if (data_seen_) {
        return fail("two embedding lists");
      }
      data_seen_ = true;
      at_ = At::Data;
      return true;
    }
    if (at_ == At::Item && key_ == Member::Embedding) {
      at_ = At::Vector;
      vector_ = "[";
      floats_.clear();
      return true;
    }
    if (at_ == At::Start || at_ == At::Data || at_ == At::Vector) {
      return fail(at_ == At::Vector ? "an embedding holding something other than numbers"
                                    : "an embedding list that is not a JSON object of items");
    }
    return startSkipping();
  }

  bool EndArray(rapidjson::SizeType) {
    --depth_;
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    if (at_ == At::Vector) {
      if (meta_.base64) {
        vector_ = vectorJson(floats_, true);
      } else {
        vector_ += ']';
      }
      has_vector_ = true;
      at_ = At::Item;
    } else {
      at_ = At::Top;  // The end of data.
    }
    return true;
  }

 private:
  /// Where the reader is: which container it is in (Start before the first, Done after it).
  enum class At { Start, Top, Data, Item, Vector, Usage, Done };
  /// The member whose value comes next, among those the reader uses.
  enum class Member { Other, Data, Usage, Index, Embedding, PromptTokens, TotalTokens };

  /// A scalar where the reader has no use for it: refused where only numbers or objects belong.
  bool scalar() {
    if (skip_ > 0) {
      return true;
    }
    switch (at_) {
      case At::Start:
      case At::Data:
        return fail("an embedding list that is not a JSON object of items");
      case At::Vector:
        return fail("an embedding holding something other than numbers");
      case At::Item:
        if (key_ == Member::Embedding) {
          return fail("an embedding that is neither numbers nor base64");
        }
        return key_ == Member::Index ? fail(wrongIndexes()) : true;
      case At::Top:
        if (key_ == Member::Data) {
          return fail("an embedding list without data");
        }
        return true;
      default:
        return true;
    }
  }

  bool base64Vector(std::string_view text) {
    const auto decoded = base64ToFloats(text);
    if (!decoded) {
      return fail("an embedding that is not base64 of float32 values");
    }
    // Infinities and NaNs have no JSON number: no embedding holds them.
    if (!std::all_of(decoded->begin(), decoded->end(), [](float f) { return std::isfinite(f); })) {
      return fail("an embedding holding a value that is not a finite number");
    }
    // Base64 is passed through as it came (its alphabet needs no escaping).
    vector_ = meta_.base64 ? "\"" + std::string(text) + "\"" : vectorJson(*decoded, false);
    has_vector_ = true;
    return true;
  }

  /// Writes the item just read, at `index`, or keeps it until every item before it is written:
  /// the list leaves in index order, whatever order the upstream sent it in. Refused: an index
  /// that is not one of the inputs sent, or that came before.
  bool place(std::int64_t index) {
    const auto at = static_cast<std::size_t>(index);
    if (index < 0 || at >= meta_.inputs || at < next_ || waiting_.contains(at)) {
      return fail(wrongIndexes());
    }
    if (at != next_) {
      waiting_.emplace(at, std::move(vector_));
      return true;
    }
    writeNext(vector_);
    for (auto it = waiting_.find(next_); it != waiting_.end(); it = waiting_.find(next_)) {
      writeNext(it->second);
      waiting_.erase(it);
    }
    return true;
  }

  void writeNext(std::string_view vector) {
    writeItem(w_, static_cast<std::int64_t>(next_));
    w_.raw(vector);
    w_.endObject();
    ++next_;
  }

  std::string wrongIndexes() const {
    return "an embedding list whose items are not one for each of the " +
           std::to_string(meta_.inputs) + " inputs sent, indexed from 0";
  }

  /// An object or array the reader has no use for: read to its end, unwritten. (An index that is
  /// one is no index.)
  bool startSkipping() {
    if (at_ == At::Item && key_ == Member::Index) {
      return fail(wrongIndexes());
    }
    skip_ = 1;
    return true;
  }

  bool enter() {
    if (++depth_ > json::kMaxDepth) {
      return fail("JSON nested deeper than " + std::to_string(json::kMaxDepth) + " levels");
    }
    return true;
  }

  bool fail(std::string what) {
    error_ = badUpstream(std::move(what));
    return false;
  }

  static std::optional<std::int64_t> integer(std::string_view text) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && end == text.data() + text.size() ? std::optional(v) : std::nullopt;
  }

  const EmbeddingMeta& meta_;
  std::optional<Usage>& usage_;
  json::Writer w_;
  At at_ = At::Start;
  Member key_ = Member::Other;
  std::size_t depth_ = 0;
  std::size_t skip_ = 0;  ///< How deep inside a value being skipped; 0 when none is.
  bool data_seen_ = false;
  std::optional<std::int64_t> index_;
  std::int64_t position_ = 0;
  std::size_t next_ = 0;                        ///< The index of the next item to write.
  std::map<std::size_t, std::string> waiting_;  ///< Items read before their turn, by index.
  bool has_vector_ = false;
  std::string vector_;  ///< The current item's vector, as JSON for the client.
  std::vector<float> floats_;
  std::optional<std::int64_t> prompt_tokens_;
  std::optional<std::int64_t> total_tokens_;
  std::optional<Error> error_;
};

}  // namespace

Result<std::string> rewriteEmbeddingList(std::string& body, const EmbeddingMeta& meta,
                                         std::optional<Usage>& usage) {
  if (body.find('\0') != std::string::npos) {
    return badUpstream("a body that is not a JSON object");
  }
  EmbeddingListReader handler(meta, usage);
  rapidjson::Reader reader;
  rapidjson::InsituStringStream stream(body.data());
  const auto result =
      reader.Parse<rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag>(stream,
                                                                                        handler);
  if (handler.error()) {
    return *handler.error();
  }
  if (result.IsError()) {
    return badUpstream("a body that is not a JSON object");
  }
  return handler.finish();
}

std::string encodeEmbeddingList(const std::vector<std::vector<float>>& vectors,
                                const EmbeddingMeta& meta, const Usage& usage) {
  json::Writer w;
  writeHead(w);
  for (std::size_t i = 0; i < vectors.size(); ++i) {
    writeItem(w, static_cast<std::int64_t>(i));
    w.raw(vectorJson(vectors[i], meta.base64));
    w.endObject();
  }
  writeTail(w, meta, usage);
  return w.take();
}

}  // namespace tollgate::openai
