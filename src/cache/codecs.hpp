// The inference cache's codecs (codec.hpp) of each endpoint. A hit's answer says so:
// `tollgate::cache_hit: true` in its body (on every chunk of a stream) besides the
// Tollgate-Cache response header, and, when billed, `tollgate::cost` 0 in its usage.
#pragma once

#include "cache/codec.hpp"
#include "openai/chat_response.hpp"

namespace tollgate::cache {

/// The member of a hit's answer (and of each of its chunks) that says it came from the cache.
inline constexpr std::string_view kCacheHitMember = "tollgate::cache_hit";

/// Rerank: the whole JSON answer, sent again with a new id. (Embeddings are kept input by
/// input: embedding_items.hpp.)
class JsonAnswerCodec final : public CacheCodec {
 public:
  explicit JsonAnswerCodec(bool billed) : billed_(billed) {}
  std::vector<Kept> keep(const std::string& key, const exchange::Transcript& sent,
                         const exchange::TokenUsage& usage) const override;
  Replay replay(const store::CacheEntry& kept) const override;

 private:
  bool billed_;
};

/// Chat: the whole completion (assembled from the chunks when it was streamed, with the counts
/// charged), sent again whole or as a stream (usage included when asked), as the request asks,
/// under the request's model string and episode.
class ChatAnswerCodec final : public CacheCodec {
 public:
  ChatAnswerCodec(const openai::ResponseMeta& meta, bool stream, bool billed)
      : meta_(meta), stream_(stream), billed_(billed) {}
  std::vector<Kept> keep(const std::string& key, const exchange::Transcript& sent,
                         const exchange::TokenUsage& usage) const override;
  Replay replay(const store::CacheEntry& kept) const override;

 private:
  const openai::ResponseMeta& meta_;
  bool stream_;
  bool billed_;
};

}  // namespace tollgate::cache
