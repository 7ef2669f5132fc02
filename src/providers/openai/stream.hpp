// The hot path of streaming from an OpenAI-compatible upstream: one `chat.completion.chunk`
// event rewritten into ours without decoding and re-encoding it (providers/openai/splice.hpp):
// the output copies the upstream's id, created, system_fingerprint, choices and usage byte for
// byte and writes our model, episode_id and service_tier.
#pragma once

#include <rapidjson/reader.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"
#include "openai/chat_response.hpp"
#include "providers/openai/splice.hpp"

namespace tollgate::providers {

class ChunkRewriter {
 public:
  /// What one event held besides its bytes.
  enum class Kind {
    Chunk,      ///< Rewritten into `out`.
    UsageOnly,  ///< A usage chunk (no choices) the client did not ask for, or a repeated one
                ///< (a stream's usage is read once): nothing out.
    Error,      ///< An `{"error":…}` event; decode it on the slow path.
    Other,      ///< Valid JSON the fast path does not take (line breaks between tokens): slow path.
  };

  explicit ChunkRewriter(const openai::ResponseMeta& meta);

  /// Rewrites `data` (one event's data) and appends `data: …\n\n` to `out`, or says why not.
  /// Fails with UpstreamError for text that is not a JSON object within the depth and UTF-8
  /// rules. `usage` receives the event's usage, when it has one and is the stream's first: a
  /// stream reports its usage once, so the client sees one usage chunk, the one charged.
  Result<Kind> rewrite(const std::string& data, std::string& out,
                       std::optional<openai::Usage>& usage);

  /// Whether this stream's usage has been read (by rewrite, or by the caller's slow path, which
  /// says so with markUsageRead): later usage is dropped.
  bool usageRead() const { return usage_read_; }
  void markUsageRead() { usage_read_ = true; }

  /// The model the stream's first chunk to name one says answered (splice::modelOf); empty
  /// until then.
  const std::string& model() const { return model_; }

 private:
  const openai::ResponseMeta& meta_;
  splice::Writer writer_;     ///< Our members, escaped once per stream.
  rapidjson::Reader reader_;  ///< Reused: its stack is allocated once per stream.
  bool usage_read_ = false;
  std::string model_;
};

/// `data` with each line feed between its tokens turned into a space: the same JSON on one
/// line, which ChunkRewriter takes (an event's data of several lines is joined with line feeds).
/// A line feed inside a string, which JSON forbids, is left for the rewriter to refuse.
std::string oneLine(std::string_view data);

}  // namespace tollgate::providers
