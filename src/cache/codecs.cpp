#include "cache/codecs.hpp"

#include <chrono>

#include "cache/chat_replay.hpp"
#include "core/ids.hpp"
#include "core/json.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::cache {
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

/// The answer's usage object with the counts charged written over the upstream's: the totals,
/// the details objects' counts (the upstream's other members in them kept, e.g. OpenAI's
/// accepted_prediction_tokens) and our cache-write members. A details object whose counts the
/// charge did not take (they were not to be trusted) is left out.
rapidjson::Value chargedUsage(rapidjson::Document& doc, const exchange::TokenUsage& usage) {
  json::Writer w;
  w.startObject();
  openai::writeUsage(w, usage, true, std::nullopt);
  w.endObject();
  rapidjson::Document charged;
  if (json::parse(charged, w.take())) {
    return rapidjson::Value(rapidjson::kObjectType);  // Never: our own writer's text.
  }
  auto& a = doc.GetAllocator();
  rapidjson::Value out(rapidjson::kObjectType);
  if (const auto sent = doc.FindMember("usage");
      sent != doc.MemberEnd() && sent->value.IsObject()) {
    out.CopyFrom(sent->value, a);
  }
  const rapidjson::Value& counts = charged["usage"];
  for (const char* details : {"prompt_tokens_details", "completion_tokens_details"}) {
    if (!counts.HasMember(details)) {
      out.RemoveMember(details);
    }
  }
  for (const auto& m : counts.GetObject()) {
    const std::string_view name = json::view(m.name);
    const auto kept = out.FindMember(m.name);
    if (m.value.IsObject() && kept != out.MemberEnd() && kept->value.IsObject()) {
      for (const auto& count : m.value.GetObject()) {
        setMember(doc, kept->value, json::view(count.name), rapidjson::Value(count.value, a));
      }
    } else {
      setMember(doc, out, name, rapidjson::Value(m.value, a));
    }
  }
  return out;
}

std::int64_t nowSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::optional<Hit> CacheCodec::found(std::vector<std::optional<store::CacheEntry>> entries) {
  if (entries.empty() || !entries.front()) {
    return std::nullopt;
  }
  return Hit{replay(*entries.front()), store::countsOf(*entries.front())};
}

std::vector<Kept> JsonAnswerCodec::keep(const std::string& key, const exchange::Transcript& sent,
                                        const exchange::TokenUsage& usage) const {
  auto doc = sent.streamed ? std::nullopt : parsed(sent.body);
  if (!doc) {
    return {};
  }
  // Kept as a hit is answered, so that a hit sends it as it is (but for a new id).
  markHit(*doc, billed_);
  return {Kept{key, json::serialize(*doc), usage}};
}

Replay JsonAnswerCodec::replay(const store::CacheEntry& kept) const {
  // Our answers that have an id write it first (rerank): a new one, without parsing the rest.
  constexpr std::string_view kIdHead = R"({"id":")";
  const std::string_view body = kept.body;
  const std::size_t id_end = body.starts_with(kIdHead) ? body.find('"', kIdHead.size()) : 0;
  if (id_end == 0 || id_end == std::string_view::npos) {
    return Replay{false, "application/json", kept.body};
  }
  std::string fresh(kIdHead);
  fresh += ids::uuidV7();
  fresh += body.substr(id_end);
  return Replay{false, "application/json", std::move(fresh)};
}

std::vector<Kept> ChatAnswerCodec::keep(const std::string& key, const exchange::Transcript& sent,
                                        const exchange::TokenUsage& usage) const {
  std::optional<std::string> completion =
      sent.streamed ? cache::completionFromStream(sent.body) : std::optional(sent.body);
  auto doc = completion ? parsed(*completion) : std::nullopt;
  if (!doc) {
    return {};
  }
  // The counts charged (or, unbilled, reported), which a stream without usage did not carry.
  setMember(*doc, *doc, "usage", chargedUsage(*doc, usage));
  doc->RemoveMember("tollgate::raw_usage");
  doc->RemoveMember("tollgate::raw_response");
  // Kept as a hit is answered: a replay only stamps it anew.
  markHit(*doc, billed_);
  return {Kept{key, json::serialize(*doc), usage}};
}

Replay ChatAnswerCodec::replay(const store::CacheEntry& kept) const {
  const cache::Stamp stamp{"chatcmpl-" + ids::uuidV7(), nowSeconds(), meta_.episode_id,
                           meta_.model};
  if (stream_) {
    return Replay{true, "text/event-stream",
                  cache::streamFromCompletion(kept.body, stamp, meta_.include_usage)};
  }
  return Replay{false, "application/json", restampCompletion(kept.body, stamp)};
}

}  // namespace tollgate::cache
