// The rerank response (spec §2.5) in Cohere's shape, which Cohere's SDKs read: results sorted by
// relevance and cut to top_n, each document's text when asked for, and `meta` with the billed
// units, the input tokens and the cost.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/money.hpp"
#include "core/prices.hpp"
#include "core/result.hpp"
#include "openai/chat_response.hpp"
#include "openai/rerank_request.hpp"

namespace tollgate::openai {

struct RerankResult {
  std::int64_t index = 0;  ///< Into the request's documents.
  double relevance_score = 0;
};

/// Our response for `results` (any order; sorted and cut here).
std::string encodeRerank(const std::string& id, std::vector<RerankResult> results,
                         const RerankRequest& request, const std::optional<Usage>& usage,
                         const std::optional<money::Pricing>& pricing);

/// Our response from an upstream's (Cohere, Jina, vLLM, Infinity: `results` with `index` and
/// `relevance_score` or `score`; tokens in `usage` or `meta`); `body` is parsed in place. `usage`
/// is set when the upstream reported tokens.
Result<std::string> rewriteRerank(std::string& body, const RerankRequest& request,
                                  const std::optional<money::Pricing>& pricing,
                                  std::optional<Usage>& usage);

}  // namespace tollgate::openai
