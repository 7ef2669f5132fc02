// How one endpoint's answers go through the inference cache: what of a complete answer is kept
// (from what its client was sent), and how a hit is answered (a new answer made of the kept one:
// a new id, time and episode; streamed when the request asks for a stream, whichever way the
// answer was first produced).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exchange/request_context.hpp"
#include "exchange/transcript.hpp"
#include "openai/fields.hpp"
#include "store/cache_store.hpp"

namespace tollgate::api {

/// The answer to a request that hit the cache.
struct Replay {
  bool streamed = false;
  std::string content_type = "application/json";
  std::string body;  ///< A whole body, or a stream's events and its end.
};

/// One entry to keep of an answer.
struct Kept {
  std::string key;
  std::string body;
  exchange::TokenUsage usage;
};

class CacheCodec {
 public:
  virtual ~CacheCodec() = default;
  /// What the cache keeps of a complete answer `sent` to the request whose key is `key` and whose
  /// charged counts are `usage` (none: nothing is kept).
  virtual std::vector<Kept> keep(const std::string& key, const exchange::Transcript& sent,
                                 const exchange::TokenUsage& usage) const = 0;
  /// The answer to a request that hit `kept`: by default its body as it is.
  virtual Replay replay(const store::CacheEntry& kept) const {
    return Replay{false, "application/json", kept.body};
  }
};

/// How a request uses the inference cache.
struct CachePlan {
  openai::CacheOptions options;
  std::string key;  ///< The normalised request's key, the team's included.
  const CacheCodec* codec = nullptr;
};

}  // namespace tollgate::api
