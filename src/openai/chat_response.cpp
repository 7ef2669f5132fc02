#include "openai/chat_response.hpp"

#include <limits>

#include "core/json.hpp"

namespace tollgate::openai {
namespace {

constexpr std::string_view kFingerprintFallback = "tollgate";

void writeOptionalString(json::Writer& w, std::string_view key,
                         const std::optional<std::string>& v) {
  w.key(key);
  if (v) {
    w.string(*v);
  } else {
    w.null();
  }
}

void writeRawOrNull(json::Writer& w, std::string_view key, const std::string& raw) {
  w.key(key);
  if (raw.empty()) {
    w.null();
  } else {
    w.raw(raw);
  }
}

void writeHead(json::Writer& w, std::string_view id, std::string_view object, std::int64_t created,
               std::string_view fingerprint, const ResponseMeta& meta) {
  w.field("id", id);
  w.field("object", object);
  w.field("created", created);
  w.field("model", meta.model);
  w.field("episode_id", meta.episode_id);
  if (!meta.variant_name.empty()) {
    w.field(kVariantMember, meta.variant_name);
  }
  w.field("system_fingerprint", fingerprint.empty() ? kFingerprintFallback : fingerprint);
  w.field("service_tier", meta.service_tier);
}

void writeExtras(json::Writer& w, const ResponseMeta& meta, const std::string& raw_usage,
                 const std::string& raw_response) {
  if (meta.include_raw_usage && !raw_usage.empty()) {
    w.key("tollgate::raw_usage");
    w.raw(raw_usage);
  }
  if (meta.include_raw_response && !raw_response.empty()) {
    w.key("tollgate::raw_response");
    w.raw(raw_response);
  }
}

}  // namespace

void writeUsage(json::Writer& w, const Usage& u, bool completion,
                const std::optional<money::Pricing>& pricing) {
  w.key("usage");
  w.startObject();
  w.field("prompt_tokens", u.prompt_tokens);
  if (completion) {
    w.field("completion_tokens", u.completion_tokens);
  }
  w.field("total_tokens", u.total_tokens);
  if (pricing) {
    w.key(kCostMember);
    w.rawNumber(costText(*pricing, u));
  }
  w.endObject();
}

void writeToolCalls(json::Writer& w, std::span<const ToolCall> calls) {
  w.key("tool_calls");
  w.startArray();
  for (const ToolCall& t : calls) {
    w.startObject();
    w.field("id", t.id);
    w.field("type", "function");
    w.key("function");
    w.startObject();
    w.field("name", t.name);
    w.field("arguments", t.arguments);
    w.endObject();
    w.endObject();
  }
  w.endArray();
}

std::string costText(const money::Pricing& pricing, const Usage& u) {
  return money::formatUsd(money::charge(pricing, u.prompt_tokens, u.completion_tokens));
}

std::string encodeCompletion(const Completion& c, const ResponseMeta& meta) {
  json::Writer w;
  w.startObject();
  writeHead(w, c.id, "chat.completion", c.created, c.system_fingerprint, meta);
  w.key("choices");
  w.startArray();
  for (const Choice& ch : c.choices) {
    w.startObject();
    w.field("index", ch.index);
    w.field("finish_reason", ch.finish_reason);
    w.key("message");
    w.startObject();
    w.field("role", "assistant");
    writeOptionalString(w, "content", ch.content);
    if (ch.refusal) {
      w.field("refusal", *ch.refusal);
    }
    if (!ch.tool_calls.empty()) {
      writeToolCalls(w, ch.tool_calls);
    }
    w.endObject();
    writeRawOrNull(w, "logprobs", ch.logprobs_json);
    w.endObject();
  }
  w.endArray();
  writeUsage(w, c.usage.value_or(Usage{}), true, c.usage ? meta.pricing : std::nullopt);
  writeExtras(w, meta, c.raw_usage_json, c.raw_response_json);
  w.endObject();
  return w.take();
}

std::string encodeChunk(const Chunk& c, const ResponseMeta& meta) {
  json::Writer w;
  w.startObject();
  writeHead(w, c.id, "chat.completion.chunk", c.created, c.system_fingerprint, meta);
  w.key("choices");
  w.startArray();
  for (const ChoiceDelta& ch : c.choices) {
    w.startObject();
    w.field("index", ch.index);
    w.key("delta");
    w.startObject();
    if (ch.role) {
      w.field("role", *ch.role);
    }
    if (ch.content) {
      w.field("content", *ch.content);
    }
    if (ch.refusal) {
      w.field("refusal", *ch.refusal);
    }
    if (!ch.tool_calls.empty()) {
      w.key("tool_calls");
      w.startArray();
      for (const ToolCallDelta& t : ch.tool_calls) {
        w.startObject();
        w.field("index", t.index);
        if (t.id) {
          w.field("id", *t.id);
          w.field("type", "function");
        }
        w.key("function");
        w.startObject();
        if (t.name) {
          w.field("name", *t.name);
        }
        if (t.arguments) {
          w.field("arguments", *t.arguments);
        }
        w.endObject();
        w.endObject();
      }
      w.endArray();
    }
    w.endObject();
    writeRawOrNull(w, "logprobs", ch.logprobs_json);
    writeOptionalString(w, "finish_reason", ch.finish_reason);
    w.endObject();
  }
  w.endArray();
  if (c.usage) {
    writeUsage(w, *c.usage, true, meta.pricing);
  }
  writeExtras(w, meta, c.raw_usage_json, c.raw_chunk_json);
  w.endObject();
  return w.take();
}

Usage usageOf(std::int64_t prompt_tokens, std::int64_t completion_tokens) {
  std::int64_t total = 0;
  if (__builtin_add_overflow(prompt_tokens, completion_tokens, &total)) {
    total = std::numeric_limits<std::int64_t>::max();
  }
  return Usage{prompt_tokens, completion_tokens, total};
}

}  // namespace tollgate::openai
