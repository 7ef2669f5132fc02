// The chat completion (spec §2.3) and its streamed chunks as typed values, and their encoding on
// our wire: provider adapters produce these, the relay encodes them for the client.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "core/money.hpp"
#include "core/prices.hpp"
#include "core/usage.hpp"

namespace tollgate::openai {

/// The gateway's one usage model (core/usage.hpp); total_tokens is derived when written.
using Usage = usage::Counts;

struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

struct Choice {
  int index = 0;
  std::string finish_reason;
  std::optional<std::string> content;  ///< null on the wire when absent (e.g. tool calls only)
  std::optional<std::string> refusal;
  std::vector<ToolCall> tool_calls;
  std::string logprobs_json;  ///< The upstream's logprobs object as JSON; empty when none.
  /// The model's thinking, written after role when present (last here: positional initialisers).
  std::optional<std::string> reasoning_content;
};

/// How much of the model an upstream says answered is kept (for a span; text::utf8Prefix).
inline constexpr std::size_t kMaxUpstreamModelBytes = 128;

struct Completion {
  std::string id;
  std::int64_t created = 0;
  std::string system_fingerprint;
  std::vector<Choice> choices;
  std::optional<Usage> usage;
  std::string raw_usage_json;     ///< The upstream's usage object as JSON; empty when none.
  std::string raw_response_json;  ///< The upstream's whole response; empty when none.
  /// The model the upstream says answered, at most kMaxUpstreamModelBytes; never written (our
  /// answer names the configured model).
  std::string upstream_model;
};

struct ToolCallDelta {
  int index = 0;
  std::optional<std::string> id;
  std::optional<std::string> name;
  std::optional<std::string> arguments;
};

struct ChoiceDelta {
  int index = 0;
  std::optional<std::string> role;
  std::optional<std::string> content;
  std::optional<std::string> refusal;
  std::vector<ToolCallDelta> tool_calls;
  std::optional<std::string> finish_reason;
  std::string logprobs_json;
  std::optional<std::string> reasoning_content;  ///< As Choice's.
};

struct Chunk {
  std::string id;
  std::int64_t created = 0;
  std::string system_fingerprint;
  std::vector<ChoiceDelta> choices;
  std::optional<Usage> usage;
  std::string raw_usage_json;
  std::string raw_chunk_json;  ///< The upstream's chunk, for tollgate::include_raw_response.
};

/// Per-request facts the gateway adds to every response it encodes.
struct ResponseMeta {
  std::string model;  ///< The model string the client sent.
  std::string episode_id;
  std::string service_tier;
  bool include_raw_usage = false;
  bool include_raw_response = false;
  bool include_usage = false;  ///< Streams: whether the client asked for the usage chunk.
  /// Set when the request is billed: every usage object then carries kCostMember, the charge
  /// for that usage in USD.
  std::optional<money::Pricing> pricing;
  std::string variant_name;  ///< The function variant that answered; empty for a plain model.
};

/// The member of a function call's answer (and each of its chunks) naming the variant that
/// answered.
inline constexpr std::string_view kVariantMember = "variant_name";

/// The member of `usage` that says what the request cost, in USD.
inline constexpr std::string_view kCostMember = "tollgate::cost";

/// The members of `usage` counting the prompt's tokens written to the provider's cache (every
/// duration), and those of them written to its 1-hour cache.
inline constexpr std::string_view kCacheWriteMember = "tollgate::cache_write_tokens";
inline constexpr std::string_view kCacheWrite1hMember = "tollgate::cache_write_1h_tokens";

/// The cost of `u` at `pricing`, as decimal USD text (a JSON number).
std::string costText(const money::Pricing& pricing, const Usage& u);

/// Writes the `usage` member of an answer on our wire: prompt_tokens, completion_tokens (when
/// `completion`: chat, not embeddings), total_tokens, for chat the details objects and cache
/// writes (writeUsageDetails), and kCostMember when `pricing` is set.
void writeUsage(json::Writer& w, const Usage& u, bool completion,
                const std::optional<money::Pricing>& pricing);

/// The `chat.completion` object.
/// Writes a message's `tool_calls` member: each call's id, type "function", name and arguments.
void writeToolCalls(json::Writer& w, std::span<const ToolCall> calls);

std::string encodeCompletion(const Completion& c, const ResponseMeta& meta);

/// One `chat.completion.chunk` object.
std::string encodeChunk(const Chunk& c, const ResponseMeta& meta);

}  // namespace tollgate::openai
