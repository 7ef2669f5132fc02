// How one endpoint's answers go through the inference cache: what of a complete answer is kept
// (from what its client was sent), and how a hit is answered (a new answer made of the kept one:
// a new id, time and episode; streamed when the request asks for a stream, whichever way the
// answer was first produced).
#pragma once

#include <optional>
#include <string>

#include "exchange/request_context.hpp"
#include "exchange/transcript.hpp"
#include "openai/fields.hpp"
#include "store/store.hpp"

namespace tollgate::api {

/// The answer to a request that hit the cache.
struct Replay {
  bool streamed = false;
  std::string content_type = "application/json";
  std::string body;  ///< A whole body, or a stream's events and its end.
};

class CacheCodec {
 public:
  virtual ~CacheCodec() = default;
  /// What the cache keeps of a complete answer `sent`, whose charged counts are `usage`; nullopt
  /// when it is not kept.
  virtual std::optional<std::string> keep(const exchange::Transcript& sent,
                                          const exchange::TokenUsage& usage) const = 0;
  /// The answer to a request that hit `kept`.
  virtual Replay replay(const store::CacheEntry& kept) const = 0;
};

/// How a request uses the inference cache.
struct CachePlan {
  openai::CacheOptions options;
  std::string key;  ///< The normalised request's key, the team's included.
  const CacheCodec* codec = nullptr;
};

}  // namespace tollgate::api
