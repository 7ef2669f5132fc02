#include "cache/chat_replay.hpp"

#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <deque>
#include <map>
#include <vector>

#include "core/json.hpp"
#include "openai/chat_response.hpp"
#include "openai/sse.hpp"

namespace tollgate::cache {
namespace {

using rapidjson::SizeType;
using rapidjson::Value;

constexpr std::string_view kCompletionObject = "chat.completion";
constexpr std::string_view kChunkObject = "chat.completion.chunk";
constexpr std::string_view kRawUsage = "tollgate::raw_usage";
constexpr std::string_view kRawResponse = "tollgate::raw_response";

// ---- A stream assembled into a completion ----

using Allocator = rapidjson::Document::AllocatorType;

/// Joins a later piece `from` of a streamed value onto `into`: strings and arrays are
/// concatenated, objects joined member by member, a null adds nothing, and anything else (a
/// number, a boolean, a piece of another type) replaces what was there.
void join(Value& into, const Value& from, Allocator& alloc) {
  if (from.IsNull()) {
    return;
  }
  if (into.IsString() && from.IsString()) {
    std::string joined(json::view(into));
    joined.append(json::view(from));
    into.SetString(joined.data(), static_cast<SizeType>(joined.size()), alloc);
  } else if (into.IsArray() && from.IsArray()) {
    for (const Value& item : from.GetArray()) {
      into.PushBack(Value(item, alloc), alloc);
    }
  } else if (into.IsObject() && from.IsObject()) {
    for (const auto& m : from.GetObject()) {
      const auto existing = into.FindMember(m.name);
      if (existing == into.MemberEnd()) {
        into.AddMember(Value(m.name, alloc), Value(m.value, alloc), alloc);
      } else {
        join(existing->value, m.value, alloc);
      }
    }
  } else {
    into.CopyFrom(from, alloc);
  }
}

/// One member of a streamed message (content, refusal, reasoning_content, annotations, audio,
/// any other), its pieces joined in the order they came.
class Joined {
 public:
  explicit Joined(std::string_view name) : name_(name) {}

  void add(const Value& piece, Allocator& alloc) {
    if (piece.IsString() && (text_ || value_.IsNull())) {
      text_ = true;  // Text is appended here, not copied once per piece.
      text_value_.append(json::view(piece));
      return;
    }
    if (text_ && !piece.IsNull()) {
      value_.SetString(text_value_.data(), static_cast<SizeType>(text_value_.size()), alloc);
      text_ = false;
      text_value_.clear();
    }
    join(value_, piece, alloc);
  }

  std::string_view name() const { return name_; }
  /// Whether some piece was a string and every later one a string or null.
  bool isText() const { return text_; }
  const std::string& text() const { return text_value_; }

  void write(json::Writer& w) const {
    w.key(name_);
    if (text_) {
      w.string(text_value_);
    } else {
      w.value(value_);
    }
  }

 private:
  std::string_view name_;  ///< Into a chunk the caller keeps alive.
  bool text_ = false;
  std::string text_value_;
  Value value_;  ///< Null until a piece that is not text; allocated in Assembly::scratch.
};

struct ChoiceParts {
  std::vector<Joined> message;  ///< The deltas' members but role and tool_calls, as first seen.
  std::map<std::int64_t, openai::ToolCall> tool_calls;  ///< By the deltas' index.
  const Value* finish_reason = nullptr;
  Value logprobs;  ///< Null until a chunk carries an object; allocated in Assembly::scratch.
  /// The choice's own members beside index, delta, logprobs and finish_reason (e.g. a
  /// stop_reason), as first seen: the last value that was not null.
  std::vector<std::pair<std::string_view, const Value*>> extras;

  Joined& member(std::string_view name) {
    for (Joined& j : message) {
      if (j.name() == name) {
        return j;
      }
    }
    return message.emplace_back(name);
  }
  const Joined* find(std::string_view name) const {
    for (const Joined& j : message) {
      if (j.name() == name) {
        return &j;
      }
    }
    return nullptr;
  }
};

/// A non-negative integer `index` member.
std::optional<std::int64_t> indexOf(const Value& object) {
  const auto index = json::intMember(object, "index");
  return index && *index >= 0 ? index : std::nullopt;
}

/// The members of a choice that are written apart from the others, streamed or whole.
bool choiceOwnMember(std::string_view name) {
  return name == "index" || name == "delta" || name == "message" || name == "logprobs" ||
         name == "finish_reason";
}

/// What the chunks of one stream add up to.
class Assembly {
 public:
  /// Takes one chunk (kept alive by the caller); false when it is not one of ours.
  bool add(const Value& chunk) {
    if (!chunk.IsObject() || chunk.HasMember("error") ||
        json::stringMember(chunk, "object") != kChunkObject) {
      return false;
    }
    const Value* choices = json::member(chunk, "choices");
    if (choices == nullptr || !choices->IsArray()) {
      return false;
    }
    if (first_ == nullptr) {
      first_ = &chunk;
    }
    for (const Value& choice : choices->GetArray()) {
      if (!choice.IsObject()) {
        return false;
      }
      const auto index = indexOf(choice);
      if (!index || !addChoice(choice, choices_[*index])) {
        return false;
      }
    }
    const Value* usage = json::member(chunk, "usage");
    if (usage_ == nullptr && usage != nullptr && usage->IsObject()) {
      usage_ = usage;
      raw_usage_ = json::member(chunk, kRawUsage);
    }
    return true;
  }

  /// The completion, or nullopt when no chunk had a choice.
  std::optional<std::string> completion() const {
    if (first_ == nullptr || choices_.empty()) {
      return std::nullopt;
    }
    json::Writer w;
    w.startObject();
    for (const auto& m : first_->GetObject()) {
      const std::string_view name = json::view(m.name);
      if (name == "object") {
        w.field("object", kCompletionObject);
      } else if (name == "choices") {
        w.key("choices");
        writeChoices(w);
      } else if (name != "usage" && name != kRawUsage && name != kRawResponse) {
        w.key(name);
        w.value(m.value);
      }
    }
    if (usage_ != nullptr) {
      w.key("usage");
      w.value(*usage_);
      if (raw_usage_ != nullptr) {
        w.key(kRawUsage);
        w.value(*raw_usage_);
      }
    }
    w.endObject();
    return w.take();
  }

 private:
  bool addChoice(const Value& choice, ChoiceParts& parts) {
    auto& alloc = scratch_.GetAllocator();
    if (const Value* delta = json::member(choice, "delta"); delta != nullptr && delta->IsObject()) {
      for (const auto& m : delta->GetObject()) {
        const std::string_view name = json::view(m.name);
        if (name == "tool_calls") {
          if (m.value.IsArray() && !addToolCalls(m.value, parts)) {
            return false;
          }
        } else if (name != "role") {
          parts.member(name).add(m.value, alloc);
        }
      }
    }
    if (const Value* logprobs = json::member(choice, "logprobs");
        logprobs != nullptr && logprobs->IsObject()) {
      if (!parts.logprobs.IsObject()) {
        parts.logprobs.SetObject();
      }
      join(parts.logprobs, *logprobs, alloc);
    }
    if (const Value* reason = json::member(choice, "finish_reason");
        reason != nullptr && reason->IsString()) {
      parts.finish_reason = reason;
    }
    for (const auto& m : choice.GetObject()) {
      const std::string_view name = json::view(m.name);
      if (choiceOwnMember(name)) {
        continue;
      }
      const auto kept = std::find_if(parts.extras.begin(), parts.extras.end(),
                                     [&](const auto& e) { return e.first == name; });
      if (kept == parts.extras.end()) {
        parts.extras.emplace_back(name, &m.value);
      } else if (!m.value.IsNull()) {
        kept->second = &m.value;
      }
    }
    return true;
  }

  static bool addToolCalls(const Value& calls, ChoiceParts& parts) {
    for (const Value& call : calls.GetArray()) {
      const auto index = call.IsObject() ? indexOf(call) : std::nullopt;
      if (!index) {
        return false;
      }
      addToolCall(call, parts.tool_calls[*index]);
    }
    return true;
  }

  static void addToolCall(const Value& call, openai::ToolCall& parts) {
    if (auto id = json::stringMember(call, "id"); id && parts.id.empty()) {
      parts.id = *id;
    }
    const Value* function = json::member(call, "function");
    if (function == nullptr || !function->IsObject()) {
      return;
    }
    if (auto name = json::stringMember(*function, "name"); name && parts.name.empty()) {
      parts.name = *name;
    }
    if (auto arguments = json::stringMember(*function, "arguments")) {
      parts.arguments.append(*arguments);
    }
  }

  void writeChoices(json::Writer& w) const {
    w.startArray();
    for (const auto& [index, c] : choices_) {
      w.startObject();
      w.field("index", index);
      w.key("finish_reason");
      if (c.finish_reason != nullptr) {
        w.value(*c.finish_reason);
      } else {
        w.string("");  // What our encoder writes for a choice without one.
      }
      w.key("message");
      w.startObject();
      w.field("role", "assistant");
      // Our streams open with an empty content even where the answer is only tool calls or a
      // refusal, whose message has none.
      const Joined* content = c.find("content");
      const Joined* refusal = c.find("refusal");
      const bool has_refusal = refusal != nullptr && refusal->isText();
      w.key("content");
      if (content != nullptr && content->isText() &&
          (!content->text().empty() || (c.tool_calls.empty() && !has_refusal))) {
        w.string(content->text());
      } else {
        w.null();
      }
      for (const Joined& m : c.message) {
        if (m.name() != "content") {
          m.write(w);
        }
      }
      if (!c.tool_calls.empty()) {
        std::vector<openai::ToolCall> calls;  // In the deltas' index order.
        for (const auto& [_, t] : c.tool_calls) {
          calls.push_back(t);
        }
        openai::writeToolCalls(w, calls);
      }
      w.endObject();
      w.key("logprobs");
      w.value(c.logprobs);
      for (const auto& [name, value] : c.extras) {
        w.key(name);
        w.value(*value);
      }
      w.endObject();
    }
    w.endArray();
  }

  rapidjson::Document scratch_;  ///< Allocates the merged logprobs.
  const Value* first_ = nullptr;
  std::map<std::int64_t, ChoiceParts> choices_;
  const Value* usage_ = nullptr;
  const Value* raw_usage_ = nullptr;
};

// ---- A completion restamped ----

/// Which top-level member a stamp replaces.
enum class Stamped { None, Id, Created, EpisodeId, Model };

Stamped stampedMember(std::string_view name) {
  if (name == "id") return Stamped::Id;
  if (name == "created") return Stamped::Created;
  if (name == "episode_id") return Stamped::EpisodeId;
  if (name == "model") return Stamped::Model;
  return Stamped::None;
}

/// A SAX handler between the reader of a completion and a writer: it passes every event on but
/// the values of the stamped top-level members, which it replaces. Numbers arrive as their text
/// (kParseNumbersAsStringsFlag) and leave as it.
class StampFilter {
 public:
  using Ch = char;

  StampFilter(rapidjson::StringBuffer& buf, const Stamp& s) : buf_(buf), w_(buf), s_(s) {}

  bool Null() {
    return scalar([&] { return w_.Null(); });
  }
  bool Bool(bool b) {
    return scalar([&] { return w_.Bool(b); });
  }
  bool Int(int i) {
    return scalar([&] { return w_.Int(i); });
  }
  bool Uint(unsigned i) {
    return scalar([&] { return w_.Uint(i); });
  }
  bool Int64(std::int64_t i) {
    return scalar([&] { return w_.Int64(i); });
  }
  bool Uint64(std::uint64_t i) {
    return scalar([&] { return w_.Uint64(i); });
  }
  bool Double(double d) {
    return scalar([&] { return w_.Double(d); });
  }
  // Writer::RawNumber would quote the text (RapidJSON 1.1.0): RawValue writes it as it is.
  bool RawNumber(const char* s, SizeType n, bool) {
    return scalar([&] { return w_.RawValue(s, n, rapidjson::kNumberType); });
  }
  bool String(const char* s, SizeType n, bool) {
    return scalar([&] { return quoted({s, n}); });
  }
  bool Key(const char* s, SizeType n, bool) {
    if (skip_ > 0) {
      return true;
    }
    if (depth_ == 1) {
      replace_ = stampedMember({s, n});
    }
    return quoted({s, n});
  }
  bool StartObject() {
    return open([&] { return w_.StartObject(); });
  }
  bool EndObject(SizeType n) {
    return close([&] { return w_.EndObject(n); });
  }
  bool StartArray() {
    return open([&] { return w_.StartArray(); });
  }
  bool EndArray(SizeType n) {
    return close([&] { return w_.EndArray(n); });
  }

 private:
  /// A string or key, quoted by json::appendQuoted: RapidJSON's SSE2 scan would write the bytes
  /// 0x1A to 0x1F raw (the text kept has them escaped; read, they are bytes again).
  bool quoted(std::string_view text) {
    w_.RawValue("", 0, rapidjson::kStringType);
    json::appendQuoted(text, buf_);
    return true;
  }

  bool writeStamp() {
    const Stamped which = replace_;
    replace_ = Stamped::None;
    switch (which) {
      case Stamped::Id:
        return quoted(s_.id);
      case Stamped::Created:
        return w_.Int64(s_.created);
      case Stamped::EpisodeId:
        return quoted(s_.episode_id);
      case Stamped::Model:
        return quoted(s_.model);
      case Stamped::None:
        break;
    }
    return true;
  }

  template <class Write>
  bool scalar(Write write) {
    if (skip_ > 0) {
      return true;
    }
    return replace_ != Stamped::None ? writeStamp() : write();
  }

  template <class Write>
  bool open(Write write) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    if (replace_ != Stamped::None) {
      skip_ = 1;  // The replaced value is a container: swallow it whole.
      return writeStamp();
    }
    ++depth_;
    return write();
  }

  template <class Write>
  bool close(Write write) {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    --depth_;
    return write();
  }

  rapidjson::StringBuffer& buf_;
  rapidjson::Writer<rapidjson::StringBuffer> w_;
  const Stamp& s_;
  std::size_t depth_ = 0;
  std::size_t skip_ = 0;  ///< Open containers of a replaced value still being read.
  Stamped replace_ = Stamped::None;
};

// ---- A completion as a stream ----

/// Writes the chunks of one stream: each with the stamped head, then its choices.
class ChunkWriter {
 public:
  ChunkWriter(const Value& completion, const Stamp& s) : completion_(completion), s_(s) {}

  /// One chunk whose `choices` holds the single choice `write_choice` writes (none when null).
  template <class WriteChoice>
  void chunk(std::string& out, WriteChoice write_choice, bool with_usage = false) const {
    json::Writer w;
    w.startObject();
    writeHead(w);
    w.key("choices");
    w.startArray();
    write_choice(w);
    w.endArray();
    if (with_usage) {
      w.key("usage");
      w.value(*json::member(completion_, "usage"));
      if (const Value* raw = json::member(completion_, kRawUsage)) {
        w.key(kRawUsage);
        w.value(*raw);
      }
    }
    w.endObject();
    out += openai::sseData(w.take());
  }

 private:
  /// The completion's top-level members before `choices`, as a chunk's, with the stamp.
  void writeHead(json::Writer& w) const {
    for (const auto& m : completion_.GetObject()) {
      const std::string_view name = json::view(m.name);
      switch (stampedMember(name)) {
        case Stamped::Id:
          w.field("id", s_.id);
          continue;
        case Stamped::Created:
          w.field("created", s_.created);
          continue;
        case Stamped::EpisodeId:
          w.field("episode_id", s_.episode_id);
          continue;
        case Stamped::Model:
          w.field("model", s_.model);
          continue;
        case Stamped::None:
          break;
      }
      if (name == "object") {
        w.field("object", kChunkObject);
      } else if (name != "choices" && name != "usage" && name != kRawUsage &&
                 name != kRawResponse) {
        w.key(name);
        w.value(m.value);
      }
    }
  }

  const Value& completion_;
  const Stamp& s_;
};

void writeOrNull(json::Writer& w, std::string_view key, const Value* value) {
  w.key(key);
  if (value != nullptr) {
    w.value(*value);
  } else {
    w.null();
  }
}

/// Opens a streamed choice object up to its delta's contents.
void openDelta(json::Writer& w, std::int64_t index) {
  w.startObject();
  w.field("index", index);
  w.key("delta");
  w.startObject();
}

/// Closes what openDelta opened, with the choice's logprobs (null when none) and finish_reason,
/// and when `choice` is given its other members (e.g. a stop_reason).
void closeDelta(json::Writer& w, const Value* logprobs, const Value* finish_reason,
                const Value* choice = nullptr) {
  w.endObject();
  writeOrNull(w, "logprobs", logprobs);
  writeOrNull(w, "finish_reason", finish_reason);
  if (choice != nullptr) {
    for (const auto& m : choice->GetObject()) {
      if (!choiceOwnMember(json::view(m.name))) {
        w.key(json::view(m.name));
        w.value(m.value);
      }
    }
  }
  w.endObject();
}

/// The members of a message that streamFromCompletion sends in deltas of their own: role,
/// content, tool_calls, and a refusal that is text.
bool messageOwnMember(std::string_view name, const Value& value) {
  return name == "role" || name == "content" || name == "tool_calls" ||
         (name == "refusal" && value.IsString());
}

void appendChoiceChunks(const ChunkWriter& chunks, const Value& choice, std::int64_t position,
                        std::string& out) {
  const std::int64_t index = indexOf(choice).value_or(position);
  const Value* message = json::member(choice, "message");
  if (message != nullptr && !message->IsObject()) {
    message = nullptr;
  }
  const Value* logprobs = json::member(choice, "logprobs");
  if (logprobs != nullptr && logprobs->IsNull()) {
    logprobs = nullptr;
  }
  const auto content = message ? json::stringMember(*message, "content") : std::nullopt;
  const auto refusal = message ? json::stringMember(*message, "refusal") : std::nullopt;
  const Value* calls = message ? json::member(*message, "tool_calls") : nullptr;

  // The message's other members (reasoning_content, annotations, audio, any other): those that
  // are null open the stream beside the role, as an upstream's first delta carries them; the
  // others come in one delta before the content, where a reasoning model streams its reasoning.
  const auto others = [&](bool nulls) {
    return [&, nulls](json::Writer& w) {
      for (const auto& m : message->GetObject()) {
        const std::string_view name = json::view(m.name);
        if (!messageOwnMember(name, m.value) && m.value.IsNull() == nulls) {
          w.key(name);
          w.value(m.value);
        }
      }
    };
  };
  chunks.chunk(out, [&](json::Writer& w) {
    openDelta(w, index);
    w.field("role", "assistant");
    w.field("content", "");
    if (message != nullptr) {
      others(true)(w);
    }
    closeDelta(w, nullptr, nullptr);
  });
  const bool has_others =
      message != nullptr &&
      std::any_of(message->MemberBegin(), message->MemberEnd(), [](const auto& m) {
        return !messageOwnMember(json::view(m.name), m.value) && !m.value.IsNull();
      });
  if (has_others) {
    chunks.chunk(out, [&](json::Writer& w) {
      openDelta(w, index);
      others(false)(w);
      closeDelta(w, nullptr, nullptr);
    });
  }
  if (content && !content->empty()) {
    chunks.chunk(out, [&](json::Writer& w) {
      openDelta(w, index);
      w.field("content", *content);
      closeDelta(w, logprobs, nullptr);
    });
    logprobs = nullptr;  // Sent.
  }
  if (refusal) {
    chunks.chunk(out, [&](json::Writer& w) {
      openDelta(w, index);
      w.field("refusal", *refusal);
      closeDelta(w, nullptr, nullptr);
    });
  }
  if (calls != nullptr && calls->IsArray()) {
    std::int64_t call_index = 0;
    for (const Value& call : calls->GetArray()) {
      if (!call.IsObject()) {
        continue;
      }
      const Value* function = json::member(call, "function");
      const bool has_function = function != nullptr && function->IsObject();
      chunks.chunk(out, [&](json::Writer& w) {
        openDelta(w, index);
        w.key("tool_calls");
        w.startArray();
        w.startObject();
        w.field("index", call_index);
        w.field("id", json::stringMember(call, "id").value_or(""));
        w.field("type", "function");
        w.key("function");
        w.startObject();
        w.field("name", has_function ? json::stringMember(*function, "name").value_or("") : "");
        w.field("arguments",
                has_function ? json::stringMember(*function, "arguments").value_or("") : "");
        w.endObject();
        w.endObject();
        w.endArray();
        closeDelta(w, nullptr, nullptr);
      });
      ++call_index;
    }
  }
  const Value* finish_reason = json::member(choice, "finish_reason");
  chunks.chunk(out, [&](json::Writer& w) {
    openDelta(w, index);
    closeDelta(w, logprobs, finish_reason, &choice);
  });
}

}  // namespace

std::optional<std::string> completionFromStream(std::string_view sse) {
  // The whole stream is already in memory: no event can be larger than it.
  openai::SseParser parser(sse.size() + 1);
  std::vector<openai::SseEvent> events;
  if (!parser.feed(sse, events) || parser.pending() || events.empty() ||
      events.back().data != "[DONE]") {
    return std::nullopt;
  }
  events.pop_back();
  std::deque<rapidjson::Document> chunks;  // A deque keeps each document where it is.
  Assembly assembly;
  for (const openai::SseEvent& ev : events) {
    if (!ev.event.empty()) {
      return std::nullopt;  // Our streams name no events.
    }
    rapidjson::Document& doc = chunks.emplace_back();
    if (json::parse(doc, ev.data) || !assembly.add(doc)) {
      return std::nullopt;  // [DONE] twice, an error event, or not a chunk.
    }
  }
  return assembly.completion();
}

std::string restampCompletion(std::string_view completion_json, const Stamp& s) {
  rapidjson::StringBuffer buf;
  StampFilter filter(buf, s);
  rapidjson::MemoryStream bytes(completion_json.data(), completion_json.size());
  rapidjson::Reader reader;
  // What the cache keeps was written by a gateway from a document read with validation: its
  // UTF-8 is not checked again on each hit (a tenth of a hit's CPU).
  constexpr unsigned kFlags =
      rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseIterativeFlag;
  if (!reader.Parse<kFlags>(bytes, filter)) {
    return {};
  }
  return std::string(buf.GetString(), buf.GetSize());
}

std::string streamFromCompletion(std::string_view completion_json, const Stamp& s,
                                 bool include_usage) {
  rapidjson::Document doc;
  if (json::parse(doc, std::string(completion_json)) || !doc.IsObject()) {
    return {};
  }
  const ChunkWriter chunks(doc, s);
  std::string out;
  if (const Value* choices = json::member(doc, "choices");
      choices != nullptr && choices->IsArray()) {
    std::int64_t position = 0;
    for (const Value& choice : choices->GetArray()) {
      if (choice.IsObject()) {
        appendChoiceChunks(chunks, choice, position, out);
      }
      ++position;
    }
  }
  const Value* usage = json::member(doc, "usage");
  if (include_usage && usage != nullptr && usage->IsObject()) {
    chunks.chunk(
        out, [](json::Writer&) {}, true);
  }
  out += openai::kSseDone;
  return out;
}

}  // namespace tollgate::cache
