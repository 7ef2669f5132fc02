// The typed rerank request (spec §4.3, the Cohere/Jina wire) and its decoder, which enforces
// §4.3 and §8 and names the offending parameter in the error.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.hpp"
#include "core/prices.hpp"
#include "core/result.hpp"
#include "openai/fields.hpp"

namespace tollgate::openai {

struct RerankRequest {
  std::string model;
  std::string_view query;               ///< Points into `body`.
  std::vector<std::string_view> texts;  ///< Each document's text, in order; points into `body`.
  rapidjson::Document body;             ///< The validated request, for the provider adapters.
  std::optional<int> top_n;
  bool return_documents = false;
  bool dryrun = false;
  CacheOptions cache;
  Tags tags;
  /// Set by the handler once the request is billed: the answer's usage then carries its cost.
  std::optional<money::Pricing> pricing;
};

/// Parses and validates a request body, in place (`body` must outlive the request). `documents`
/// holds strings or objects with a string `text` (at most 10,000, as Cohere's limit); an empty
/// array is valid (its answer has no results). Unknown fields are accepted unless
/// `tollgate::deny_unknown_fields` is true.
Result<RerankRequest> decodeRerankRequest(std::string& body);

}  // namespace tollgate::openai
