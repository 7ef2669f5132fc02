// The typed embeddings request (spec §4.2) and its decoder, which enforces §4.2 and §8 and names
// the offending parameter in the error.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <optional>
#include <string>

#include "core/money.hpp"
#include "core/prices.hpp"
#include "core/result.hpp"
#include "openai/fields.hpp"

namespace tollgate::openai {

/// The current form of an embedding model's name: tollgate::embedding_model_name::ID.
inline constexpr std::string_view kEmbeddingModelPrefix = "tollgate::embedding_model_name::";

struct EmbeddingRequest {
  std::string model;         ///< As the client sent it.
  std::string model_id;      ///< Without the prefix.
  bool unprefixed = false;   ///< A bare model name: accepted, but deprecated (spec §9).
  rapidjson::Document body;  ///< The validated request, kept whole for the provider adapters.
  bool base64 = false;       ///< encoding_format "base64"
  std::optional<int> dimensions;
  std::size_t inputs = 0;  ///< How many texts (or token arrays) to embed.
  bool dryrun = false;
  CacheOptions cache;
  Tags tags;
  /// Set by the handler once the request is billed: the answer's usage then carries its cost.
  std::optional<money::Pricing> pricing;
};

/// Parses and validates a request body, in place (`body` must outlive the request). `input` is a
/// string, an array of strings, an array of token ids or an array of such arrays (OpenAI's forms;
/// LangChain sends token arrays), never empty. Unknown fields are accepted unless
/// `tollgate::deny_unknown_fields` is true.
Result<EmbeddingRequest> decodeEmbeddingRequest(std::string& body);

/// True for the fields forwarded to an OpenAI-compatible upstream.
bool isForwardedEmbeddingField(std::string_view name);

}  // namespace tollgate::openai
