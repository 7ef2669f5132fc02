// Splicing an OpenAI-compatible upstream's chat object (a whole `chat.completion` or one
// `chat.completion.chunk`) into ours without decoding and re-encoding it. One SAX pass validates
// the object (JSON syntax, depth, UTF-8, the shape of its choices, its usage counts) while noting
// the byte ranges of its top-level values; the output then copies the upstream's id, created,
// system_fingerprint, choices, usage and (Azure's) prompt_filter_results byte for byte around the
// members the gateway writes (object, model, episode_id, variant_name, service_tier, the usage's
// cost, the raw extras).
#pragma once

#include <rapidjson/reader.h>

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "openai/chat_response.hpp"

namespace tollgate::providers::splice {

/// The top-level members the output keeps: ours, and Azure's prompt filter results.
enum Member { kId, kCreated, kFingerprint, kChoices, kUsage, kPromptFilters, kMemberCount };

/// JSON value types, as far as the output needs them.
enum class Type { None, String, Integer, OtherScalar, Object, Array };

/// Where one top-level value lies in the scanned text.
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
  Type type = Type::None;
};

/// Which object is scanned: a chunk's choices carry deltas, a whole answer's a message each.
enum class Shape { Chunk, Completion };

/// Why an object whose JSON is valid is still not an answer we relay (the first such fault).
enum class Fault {
  None,
  ChoiceNotObject,          ///< An element of `choices` that is not an object.
  ChoiceWithoutMessage,     ///< Whole answers: a choice without a message object.
  ToolCallWithoutFunction,  ///< Whole answers: a message's tool call without a function object.
};

/// What one pass over an upstream's object found.
struct Scan {
  std::array<Span, kMemberCount> spans{};
  bool error = false;       ///< A top-level `error` member.
  std::size_t choices = 0;  ///< Elements of `choices`, when it is an array.
  Fault fault = Fault::None;
  /// The usage object's counts, when both totals are there and each count is one (a count is
  /// a non-negative integer within int64; a detail left out or null is 0). nullopt otherwise:
  /// the charge is then estimated and flagged, never taken as zero.
  std::optional<openai::Usage> usage;
  /// The first top-level `model` string: which model the upstream says answered. Not kept in
  /// the output (ours names the configured model), only read for a span (modelOf).
  Span model;

  bool sawUsage() const { return spans[kUsage].type == Type::Object; }
  /// The text of member `m` in `text` when it has type `want` and is not an empty string,
  /// else `fallback`.
  std::string_view value(std::string_view text, Member m, Type want,
                         std::string_view fallback) const;
};

/// Scans `text`; nullopt when it is not one JSON object within the depth and UTF-8 rules, or
/// repeats a kept member (readers disagree on which copy wins). `reader` is reused between
/// calls: its stack is allocated once.
std::optional<Scan> scan(const std::string& text, Shape shape, rapidjson::Reader& reader);

/// The model `s` found in `text`, decoded and cut to at most openai::kMaxUpstreamModelBytes on
/// a character's boundary; empty when there was none.
std::string modelOf(std::string_view text, const Scan& s);

/// Writes the gateway's members around the upstream's bytes, for one request's answer.
class Writer {
 public:
  explicit Writer(const openai::ResponseMeta& meta);

  /// Appends `{"id":…,"object":<object>,"created":…,<ours>,"choices":…` from `text`, and the
  /// upstream's `prompt_filter_results` when it sent an array of them (Azure does).
  void head(std::string& out, std::string_view object, std::string_view text, const Scan& s) const;
  /// Appends `,"usage":` and the upstream's usage object with our cost member before its
  /// closing brace (when billed and the counts are `counted`), or `fallback` when the upstream
  /// sent no usage object.
  void usage(std::string& out, std::string_view text, const Scan& s,
             const std::optional<openai::Usage>& counted, std::string_view fallback) const;
  /// Appends `,"tollgate::raw_usage":<raw>` when the client asked for it.
  void rawUsage(std::string& out, std::string_view raw) const;
  /// Appends `,"tollgate::raw_response":<text>` when the client asked for it, and the closing
  /// brace.
  void close(std::string& out, std::string_view text) const;

 private:
  const openai::ResponseMeta& meta_;
  std::string after_created_;      ///< `,"model":…,"episode_id":…` (escaped once).
  std::string after_fingerprint_;  ///< `,"service_tier":…`
};

}  // namespace tollgate::providers::splice
