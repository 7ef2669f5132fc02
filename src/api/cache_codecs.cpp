#include "api/cache_codecs.hpp"

#include <chrono>

#include "cache/chat_replay.hpp"
#include "core/ids.hpp"
#include "core/json.hpp"

namespace tollgate::api {
namespace {

/// A kept answer, parsed; nullopt when it is not a JSON object (never written so).
std::optional<rapidjson::Document> parsed(const std::string& text) {
  rapidjson::Document doc;
  if (json::parse(doc, text) || !doc.IsObject()) {
    return std::nullopt;
  }
  return doc;
}

void setMember(rapidjson::Document& doc, rapidjson::Value& object, std::string_view name,
               rapidjson::Value value) {
  auto& a = doc.GetAllocator();
  if (auto it = object.FindMember(rapidjson::StringRef(name.data(), name.size()));
      it != object.MemberEnd()) {
    it->value = std::move(value);
    return;
  }
  object.AddMember(rapidjson::Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), a),
                   std::move(value), a);
}

/// Marks `doc` a hit: the member that says so, and when billed a cost of 0 in its usage.
void markHit(rapidjson::Document& doc, bool billed) {
  setMember(doc, doc, kCacheHitMember, rapidjson::Value(true));
  auto usage = doc.FindMember("usage");
  if (billed && usage != doc.MemberEnd() && usage->value.IsObject()) {
    setMember(doc, usage->value, openai::kCostMember, rapidjson::Value(0));
  }
}

std::int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<std::string> JsonAnswerCodec::keep(const exchange::Transcript& sent,
                                                 const exchange::TokenUsage&) const {
  if (sent.streamed) {
    return std::nullopt;
  }
  return sent.body;
}

Replay JsonAnswerCodec::replay(const store::CacheEntry& kept) const {
  auto doc = parsed(kept.body);
  if (!doc) {
    return Replay{false, "application/json", kept.body};
  }
  if (doc->HasMember("id")) {
    const std::string id = ids::uuidV7();
    setMember(*doc, *doc, "id", rapidjson::Value(id.c_str(), doc->GetAllocator()));
  }
  markHit(*doc, billed_);
  return Replay{false, "application/json", json::serialize(*doc)};
}

std::optional<std::string> ChatAnswerCodec::keep(const exchange::Transcript& sent,
                                                 const exchange::TokenUsage& usage) const {
  std::optional<std::string> completion =
      sent.streamed ? cache::completionFromStream(sent.body) : std::optional(sent.body);
  if (!completion) {
    return std::nullopt;
  }
  auto doc = parsed(*completion);
  if (!doc) {
    return std::nullopt;
  }
  // The counts charged (or, unbilled, reported), which a stream without usage did not carry.
  auto& a = doc->GetAllocator();
  rapidjson::Value counts(rapidjson::kObjectType);
  counts.AddMember("prompt_tokens", usage.prompt_tokens, a);
  counts.AddMember("completion_tokens", usage.completion_tokens, a);
  counts.AddMember("total_tokens", usage.prompt_tokens + usage.completion_tokens, a);
  setMember(*doc, *doc, "usage", std::move(counts));
  doc->RemoveMember("tollgate::raw_usage");
  doc->RemoveMember("tollgate::raw_response");
  return json::serialize(*doc);
}

Replay ChatAnswerCodec::replay(const store::CacheEntry& kept) const {
  auto doc = parsed(kept.body);
  if (!doc) {
    return Replay{false, "application/json", kept.body};
  }
  markHit(*doc, billed_);
  const std::string completion = json::serialize(*doc);
  const cache::Stamp stamp{"chatcmpl-" + ids::uuidV7(), nowSeconds(), meta_.episode_id,
                           meta_.model};
  if (stream_) {
    return Replay{true, "text/event-stream",
                  cache::streamFromCompletion(completion, stamp, meta_.include_usage)};
  }
  return Replay{false, "application/json", cache::restampCompletion(completion, stamp)};
}

}  // namespace tollgate::api
