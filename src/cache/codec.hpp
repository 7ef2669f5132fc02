// How one endpoint's answers go through the inference cache: what a read looks up and what of it
// answers the request (a hit: a new answer made of the kept one, with a new id, time and episode;
// streamed when the request asks for a stream, whichever way the answer was first produced), and
// what of a complete answer is kept (from what its client was sent).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "exchange/request_context.hpp"
#include "exchange/transcript.hpp"
#include "http/writer.hpp"
#include "openai/fields.hpp"
#include "store/cache_store.hpp"

namespace tollgate::cache {

/// The answer to a request that hit the cache.
struct Replay {
  bool streamed = false;
  std::string content_type = "application/json";
  std::string body;  ///< A whole body, or a stream's events and its end.
};

/// What a read found that answers the request whole, and the counts it was charged when kept.
struct Hit {
  Replay replay;
  exchange::TokenUsage usage;
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
  /// The keys a read of the request keyed `key` looks up: by default that key alone.
  virtual std::vector<std::string> lookup(const std::string& key) { return {key}; }
  /// Takes what a read found, an entry (or none) per key of lookup(): the hit when it answers the
  /// request whole; else nullopt, and the request goes upstream (for what was not found when the
  /// read was partial()). By default the first key's entry, replayed.
  virtual std::optional<Hit> found(std::vector<std::optional<store::CacheEntry>> entries);
  /// Whether the read found part of the request, whose answer then goes through writer().
  virtual bool partial() const { return false; }
  /// What the upstream's answer goes through on its way to `out`: `out` itself by default.
  virtual http::ResponseWriter& writer(http::ResponseWriter& out) { return out; }
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
  CacheCodec* codec = nullptr;
};

}  // namespace tollgate::cache
