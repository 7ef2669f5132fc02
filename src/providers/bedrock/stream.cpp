// ConverseStream's events (messageStart, contentBlockStart/Delta/Stop, messageStop, metadata,
// and the event stream's exceptions) as our chunks.
#include <rapidjson/document.h>

#include <limits>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/sse.hpp"
#include "providers/answer_parts.hpp"
#include "providers/bedrock/bedrock.hpp"

namespace tollgate::providers::bedrock {
namespace {

using rapidjson::Value;

constexpr std::string_view kException = "exception:";
constexpr std::string_view kError = "error:";

/// A content block's index: present, and a position.
std::optional<int> blockIndex(const Value& event) {
  const auto index = json::intMember(event, "contentBlockIndex");
  if (!index || *index < 0 || *index > std::numeric_limits<int>::max()) {
    return std::nullopt;
  }
  return static_cast<int>(*index);
}

}  // namespace

StreamDecoder::StreamDecoder(const openai::ResponseMeta& meta, std::string id, std::int64_t created)
    : meta_(meta), id_(std::move(id)), created_(created) {}

void StreamDecoder::emit(openai::Chunk& c, std::string& out, const std::string& raw) {
  emitChunk(c, meta_, id_, created_, raw, out);
}

Result<bool> StreamDecoder::event(std::string_view name, std::string& data, std::string& out,
                                  std::optional<openai::Usage>& usage) {
  if (name.starts_with(kError)) {
    // An event stream's error message: its code and text, not JSON.
    return errorOfType(502, name.substr(kError.size()), text::printable(data, 200));
  }
  const std::string raw = meta_.include_raw_response ? data : std::string();
  rapidjson::Document doc;
  if (json::parseInPlace(doc, data) || !doc.IsObject()) {
    return malformedAnswer("a stream event that is not a JSON object");
  }
  if (name.starts_with(kException)) {
    return errorOfType(502, name.substr(kException.size()),
                       json::stringMember(doc, "message").value_or(""));
  }
  if (name == "messageStart") {
    if (started_) {
      return malformedAnswer("a repeated messageStart event");
    }
    started_ = true;
    openai::Chunk c = firstChunk();
    emit(c, out, raw);
    return false;
  }
  if (!started_) {
    return malformedAnswer("a stream event before messageStart");
  }
  if (name == "contentBlockStart") {
    const Value* start = json::member(doc, "start");
    const auto index = blockIndex(doc);
    if (start == nullptr || !start->IsObject() || !index) {
      return malformedAnswer("a contentBlockStart event without a contentBlockIndex and a start");
    }
    if (const Value* use = json::member(*start, "toolUse"); use != nullptr && use->IsObject()) {
      tool_block_ = *index;
      openai::Chunk c = toolCallStart(tools_++, json::stringMember(*use, "toolUseId").value_or(""),
                                      json::stringMember(*use, "name").value_or(""));
      emit(c, out, raw);
    }
    return false;
  }
  if (name == "contentBlockDelta") {
    const Value* delta = json::member(doc, "delta");
    const auto index = blockIndex(doc);
    if (delta == nullptr || !delta->IsObject() || !index) {
      return malformedAnswer("a contentBlockDelta event without a contentBlockIndex and a delta");
    }
    openai::ChoiceDelta d;
    if (const auto text = json::stringMember(*delta, "text")) {
      d.content = std::string(*text);
    } else if (const Value* use = json::member(*delta, "toolUse"); use != nullptr) {
      const auto input = use->IsObject() ? json::stringMember(*use, "input") : std::nullopt;
      if (!input || *index != tool_block_) {
        return malformedAnswer("a toolUse delta outside a toolUse block");
      }
      openai::ToolCallDelta call;
      call.index = tools_ - 1;
      call.arguments = std::string(*input);
      d.tool_calls.push_back(std::move(call));
    } else if (const Value* r = json::member(*delta, "reasoningContent");
               r != nullptr && r->IsObject()) {
      const auto thinking = json::stringMember(*r, "text");
      if (!thinking) {
        return false;  // A signature or redacted content: no place in our chunks.
      }
      d.reasoning_content = std::string(*thinking);
    } else {
      return false;  // Bedrock may add delta kinds (citations, …): skipped.
    }
    openai::Chunk c = chunkWith(std::move(d));
    emit(c, out, raw);
    return false;
  }
  if (name == "contentBlockStop") {
    if (blockIndex(doc) == tool_block_) {
      tool_block_ = -1;
    }
    return false;
  }
  if (name == "messageStop") {
    const auto stop = json::stringMember(doc, "stopReason");
    if (!stop || stopped_) {
      return malformedAnswer("a messageStop event that is repeated or has no stopReason");
    }
    stopped_ = true;
    openai::ChoiceDelta d;
    d.finish_reason = std::string(finishReason(*stop));
    openai::Chunk c = chunkWith(std::move(d));
    emit(c, out, raw);
    return false;
  }
  if (name == "metadata") {
    if (!stopped_) {
      return malformedAnswer("a metadata event before messageStop");
    }
    std::string raw_usage;
    if (const Value* u = json::member(doc, "usage"); u != nullptr && u->IsObject()) {
      usage = readUsage(*u);  // Missing when untrusted: the charge is estimated, and flagged.
      if (meta_.include_raw_usage) {
        raw_usage = json::serialize(*u);
      }
    }
    if (meta_.include_usage && usage) {
      openai::Chunk c;
      c.usage = usage;
      c.raw_usage_json = raw_usage;
      emit(c, out, raw);
    }
    return true;
  }
  return false;  // Unknown events are skipped.
}

}  // namespace tollgate::providers::bedrock
