// Anthropic's stream events (message_start, content_block_start/delta/stop, message_delta,
// message_stop, ping, error) as our chunks. Each event is parsed once, in place; text deltas,
// the bulk of a stream, are written between a chunk's precomputed head and tail.
#include <rapidjson/document.h>

#include <array>
#include <limits>

#include "core/json.hpp"
#include "core/text.hpp"
#include "openai/sse.hpp"
#include "providers/answer_parts.hpp"
#include "providers/anthropic/anthropic.hpp"

namespace tollgate::providers::anthropic {
namespace {

using rapidjson::Value;

/// Parse memory for one event: small events (nearly all) need no allocation.
constexpr std::size_t kEventPoolBytes = 4096;

/// The content a template chunk carries, to find where a text delta goes.
constexpr std::string_view kMarker = "\"content\":\"x\"";

/// A content block's index: present, and a position (-1 marks "no open tool block", and a
/// client must never see a negative tool call index).
bool validIndex(std::optional<std::int64_t> index) {
  return index && *index >= 0 && *index <= std::numeric_limits<int>::max();
}

/// A chunk of the model's thinking.
openai::Chunk reasoningChunk(std::string_view thinking) {
  openai::ChoiceDelta d;
  d.reasoning_content = std::string(thinking);
  return chunkWith(std::move(d));
}

}  // namespace

StreamDecoder::StreamDecoder(const openai::ResponseMeta& meta, bool json, std::int64_t created)
    : meta_(meta), json_(json), created_(created) {}

void StreamDecoder::emit(openai::Chunk& c, std::string& out, const std::string& raw) {
  emitChunk(c, meta_, id_, created_, raw, out);
}

void StreamDecoder::emitContent(std::string_view text, std::string& out) {
  out.reserve(out.size() + content_head_.size() + text.size() + content_tail_.size() + 2);
  out += content_head_;
  json::appendQuoted(text, out);
  out += content_tail_;
}

std::optional<openai::Usage> StreamDecoder::reportedUsage() const { return usage_.counts(); }

Result<bool> StreamDecoder::event(std::string_view name, std::string& data, std::string& out,
                                  std::optional<openai::Usage>& usage) {
  const std::string raw = meta_.include_raw_response ? data : std::string();
  std::array<char, kEventPoolBytes> pool;
  rapidjson::MemoryPoolAllocator<> allocator(pool.data(), pool.size());
  rapidjson::Document doc(&allocator);
  if (json::parseInPlace(doc, data) || !doc.IsObject()) {
    return malformedAnswer("a stream event that is not a JSON object");
  }
  const std::string_view type = json::stringMember(doc, "type").value_or(name);
  if (type == "ping") {
    return false;
  }
  if (type == "error") {
    const Value* err = json::member(doc, "error");
    if (err == nullptr || !err->IsObject()) {
      return malformedAnswer("an error event without an error object");
    }
    return errorOfType(502, json::stringMember(*err, "type").value_or(""),
                       json::stringMember(*err, "message").value_or(""));
  }
  if (type == "message_start") {
    const Value* message = json::member(doc, "message");
    if (started_ || message == nullptr || !message->IsObject()) {
      return malformedAnswer("a message_start event that is repeated or has no message");
    }
    started_ = true;
    id_ = json::stringMember(*message, "id").value_or("");
    model_ = text::utf8Prefix(json::stringMember(*message, "model").value_or(""),
                              openai::kMaxUpstreamModelBytes);
    // Not final: a stream cut before message_delta is charged at least these (reportedUsage).
    if (const Value* u = json::member(*message, "usage"); u != nullptr && u->IsObject()) {
      usage_.read(*u);
    }
    openai::ChoiceDelta d;
    d.content = "x";
    openai::Chunk probe = chunkWith(std::move(d));
    probe.id = id_;
    probe.created = created_;
    const std::string text = openai::sseData(openai::encodeChunk(probe, meta_));
    const std::size_t at = text.rfind(kMarker);
    content_head_ = text.substr(0, at + kMarker.size() - 3);  // Up to `"content":`.
    content_tail_ = text.substr(at + kMarker.size());
    openai::Chunk c = firstChunk();
    emit(c, out, raw);
    return false;
  }
  if (!started_) {
    return malformedAnswer("a stream event before message_start");
  }
  if (type == "content_block_start") {
    const Value* block = json::member(doc, "content_block");
    const auto index = json::intMember(doc, "index");
    if (block == nullptr || !block->IsObject() || !validIndex(index)) {
      return malformedAnswer("a content_block_start event without an index and a content_block");
    }
    const std::string_view kind = json::stringMember(*block, "type").value_or("");
    if (kind == "tool_use") {
      tool_block_ = static_cast<int>(*index);
      if (!json_) {
        openai::Chunk c = toolCallStart(tools_++, json::stringMember(*block, "id").value_or(""),
                                        json::stringMember(*block, "name").value_or(""));
        emit(c, out, raw);
      }
    } else if (kind == "text") {
      const std::string_view text = json::stringMember(*block, "text").value_or("");
      if (!text.empty()) {
        emitContent(text, out);
      }
    } else if (kind == "thinking") {
      const std::string_view thinking = json::stringMember(*block, "thinking").value_or("");
      if (!thinking.empty()) {
        openai::Chunk c = reasoningChunk(thinking);
        emit(c, out, raw);
      }
    }
    // redacted_thinking blocks are never sent as text: they are dropped, as signatures are.
    return false;
  }
  if (type == "content_block_delta") {
    const Value* delta = json::member(doc, "delta");
    const auto index = json::intMember(doc, "index");
    if (delta == nullptr || !delta->IsObject() || !validIndex(index)) {
      return malformedAnswer("a content_block_delta event without an index and a delta");
    }
    const std::string_view kind = json::stringMember(*delta, "type").value_or("");
    if (kind == "text_delta") {
      const auto text = json::stringMember(*delta, "text");
      if (!text) {
        return malformedAnswer("a text_delta without text");
      }
      if (meta_.include_raw_response) {
        openai::ChoiceDelta d;
        d.content = std::string(*text);
        openai::Chunk c = chunkWith(std::move(d));
        emit(c, out, raw);
      } else {
        emitContent(*text, out);
      }
    } else if (kind == "input_json_delta") {
      const auto partial = json::stringMember(*delta, "partial_json");
      if (!partial || *index != tool_block_) {
        return malformedAnswer("an input_json_delta outside a tool_use block");
      }
      openai::ChoiceDelta d;
      if (json_) {
        d.content = std::string(*partial);
      } else {
        openai::ToolCallDelta call;
        call.index = tools_ - 1;
        call.arguments = std::string(*partial);
        d.tool_calls.push_back(std::move(call));
      }
      openai::Chunk c = chunkWith(std::move(d));
      emit(c, out, raw);
    } else if (kind == "thinking_delta") {
      const auto thinking = json::stringMember(*delta, "thinking");
      if (!thinking) {
        return malformedAnswer("a thinking_delta without thinking");
      }
      openai::Chunk c = reasoningChunk(*thinking);
      emit(c, out, raw);
    }
    // signature_delta and citations_delta have no place in our chunks.
    return false;
  }
  if (type == "content_block_stop") {
    if (json::intMember(doc, "index") == tool_block_) {
      tool_block_ = -1;
    }
    return false;
  }
  if (type == "message_delta") {
    const Value* delta = json::member(doc, "delta");
    if (delta == nullptr || !delta->IsObject()) {
      return malformedAnswer("a message_delta event without a delta");
    }
    if (const Value* u = json::member(doc, "usage"); u != nullptr && u->IsObject()) {
      // Cumulative counts; input counts appear here only when they changed, and the kinds of
      // message_start's are kept through to the final usage.
      usage_.read(*u);
      if (auto counts = usage_.counts()) {
        usage = counts;
      }
      if (meta_.include_raw_usage) {
        raw_usage_ = json::serialize(*u);
      }
    }
    if (const auto stop = json::stringMember(*delta, "stop_reason")) {
      openai::ChoiceDelta d;
      d.finish_reason = std::string(finishReason(*stop, json_));
      openai::Chunk c = chunkWith(std::move(d));
      emit(c, out, raw);
    }
    return false;
  }
  if (type == "message_stop") {
    // Missing (not zero) when untrusted or never reported: the charge is estimated, and flagged.
    usage = usage_.counts();
    if (meta_.include_usage && usage) {
      openai::Chunk c;
      c.usage = usage;
      c.raw_usage_json = raw_usage_;
      emit(c, out, raw);
    }
    return true;
  }
  return false;  // Anthropic may add event types; unknown ones are skipped, as it advises.
}

}  // namespace tollgate::providers::anthropic
