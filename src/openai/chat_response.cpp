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

/// The kinds of `u` in OpenAI's details objects, and cache writes in our members.
void writeUsageDetails(json::Writer& w, const Usage& u) {
  if (u.prompt_details || u.cached_tokens != 0 || u.audio_prompt_tokens != 0) {
    w.key("prompt_tokens_details");
    w.startObject();
    w.field("cached_tokens", u.cached_tokens);
    w.field("audio_tokens", u.audio_prompt_tokens);
    w.endObject();
  }
  if (u.completion_details || u.reasoning_tokens != 0 || u.audio_completion_tokens != 0) {
    w.key("completion_tokens_details");
    w.startObject();
    w.field("reasoning_tokens", u.reasoning_tokens);
    w.field("audio_tokens", u.audio_completion_tokens);
    w.endObject();
  }
  if (u.cache_write_tokens != 0) {
    w.field(kCacheWriteMember, u.cache_write_tokens);
  }
  if (u.cache_write_1h_tokens != 0) {
    w.field(kCacheWrite1hMember, u.cache_write_1h_tokens);
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
  w.field("total_tokens", usage::total(u));
  if (completion) {
    writeUsageDetails(w, u);
  }
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
  return money::formatUsd(money::charge(pricing, u));
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
    if (ch.reasoning_content) {
      w.field("reasoning_content", *ch.reasoning_content);
    }
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
    if (ch.reasoning_content) {
      w.field("reasoning_content", *ch.reasoning_content);
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

}  // namespace tollgate::openai
