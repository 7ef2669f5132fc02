// Gemini's streamed answer (`streamGenerateContent?alt=sse`): each event is a whole
// GenerateContentResponse holding the next parts, the last ones a finishReason, and a
// usageMetadata repeated cumulatively. No marker ends it: the body's end does (finish()).
#include <rapidjson/document.h>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/sse.hpp"
#include "providers/gemini/gemini.hpp"
#include "providers/wire.hpp"

namespace tollgate::providers::gemini {
namespace {

using rapidjson::Value;

}  // namespace

StreamDecoder::StreamDecoder(const openai::ResponseMeta& meta, std::int64_t created)
    : meta_(meta), created_(created) {}

void StreamDecoder::emit(openai::ChoiceDelta d, std::string& out, const std::string& raw) {
  openai::Chunk c;
  c.id = id_;
  c.created = created_;
  c.choices.push_back(std::move(d));
  if (meta_.include_raw_response) {
    c.raw_chunk_json = raw;
  }
  out += openai::sseData(openai::encodeChunk(c, meta_));
}

Result<bool> StreamDecoder::event(std::string& data, std::string& out) {
  const std::string raw = meta_.include_raw_response ? data : std::string();
  const PooledEvent event(data);
  if (!event.isObject()) {
    return malformedAnswer("a stream event that is not a JSON object");
  }
  const rapidjson::Document& doc = event.doc();
  if (const Value* err = json::member(doc, "error"); err != nullptr) {
    if (!err->IsObject()) {
      return malformedAnswer("an error event without an error object");
    }
    return errorOfStatus(502, json::stringMember(*err, "status").value_or(""),
                         json::stringMember(*err, "message").value_or(""));
  }
  const Value* candidates = json::member(doc, "candidates");
  const bool has_candidate = candidates != nullptr && candidates->IsArray() && !candidates->Empty();
  if (!has_candidate) {
    const Value* feedback = json::member(doc, "promptFeedback");
    if (const auto reason = feedback != nullptr && feedback->IsObject()
                                ? json::stringMember(*feedback, "blockReason")
                                : std::nullopt) {
      return Error{
          ErrorKind::UpstreamInvalidRequest,
          "the upstream provider blocked the prompt (" + text::printable(*reason, 64) + ")", ""};
    }
  }
  if (candidates != nullptr && !candidates->IsNull() && !candidates->IsArray()) {
    return malformedAnswer("candidates that are not an array");
  }
  if (const Value* u = json::member(doc, "usageMetadata"); u != nullptr && !u->IsNull()) {
    // Cumulative: the last one is the answer's. One that is invalid leaves the usage missing.
    usage_ = readUsage(*u);
    if (meta_.include_raw_usage) {
      raw_usage_ = json::serialize(*u);
    }
  }
  if (!started_) {
    started_ = true;
    id_ = "chatcmpl-" + std::string(json::stringMember(doc, "responseId").value_or(""));
    model_ = text::utf8Prefix(json::stringMember(doc, "modelVersion").value_or(""),
                              openai::kMaxUpstreamModelBytes);
    openai::ChoiceDelta first;
    first.role = "assistant";
    first.content = "";
    emit(std::move(first), out, raw);
  }
  if (!has_candidate) {
    return false;
  }
  const Value& candidate = (*candidates)[0];
  auto parts = readParts(candidate, tools_);
  if (!parts) {
    return std::move(parts).error();
  }
  if (parts->reasoning) {
    openai::ChoiceDelta d;
    d.reasoning_content = std::move(parts->reasoning);
    emit(std::move(d), out, raw);
  }
  if (parts->text) {
    openai::ChoiceDelta d;
    d.content = std::move(parts->text);
    emit(std::move(d), out, raw);
  }
  const int first_call = tools_ - static_cast<int>(parts->calls.size());
  for (std::size_t i = 0; i < parts->calls.size(); ++i) {
    openai::ToolCallDelta call;
    call.index = first_call + static_cast<int>(i);
    call.id = std::move(parts->calls[i].id);
    call.name = std::move(parts->calls[i].name);
    call.arguments = std::move(parts->calls[i].arguments);
    openai::ChoiceDelta d;
    d.tool_calls.push_back(std::move(call));
    emit(std::move(d), out, raw);
  }
  const auto reason = json::stringMember(candidate, "finishReason");
  if (reason && !reason->empty() && !finished_) {
    finished_ = true;
    openai::ChoiceDelta d;
    d.finish_reason = std::string(finishReason(*reason, tools_ > 0));
    emit(std::move(d), out, raw);
  }
  return false;
}

bool StreamDecoder::finish(std::string& out, std::optional<openai::Usage>& usage) {
  if (!finished_) {
    return false;  // Cut: charged at least the last usageMetadata (reportedUsage).
  }
  usage = usage_;
  if (meta_.include_usage && usage) {
    openai::Chunk c;
    c.id = id_;
    c.created = created_;
    c.usage = usage;
    c.raw_usage_json = raw_usage_;
    out += openai::sseData(openai::encodeChunk(c, meta_));
  }
  return true;
}

}  // namespace tollgate::providers::gemini
