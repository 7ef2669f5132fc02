// The embedding list (spec §2.4) as the gateway answers it: the model named as the client asked,
// each vector in the encoding the client asked for (float, or OpenAI's base64 of little-endian
// float32, converted when the upstream gave the other), and usage with its cost.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.hpp"
#include "core/prices.hpp"
#include "core/result.hpp"
#include "openai/chat_response.hpp"

namespace tollgate::openai {

/// float32 values as base64 of their little-endian bytes (OpenAI's encoding_format "base64").
std::string floatsToBase64(std::span<const float> values);

/// The inverse; nullopt when `text` is not base64 of a whole number of float32 values.
std::optional<std::vector<float>> base64ToFloats(std::string_view text);

/// What the gateway adds to an embedding list.
struct EmbeddingMeta {
  std::string model;  ///< As the client sent it.
  bool base64 = false;
  std::optional<money::Pricing> pricing;  ///< Set when billed: usage then carries the cost.
  /// How many inputs were sent upstream: its answer must hold one item for each, indexed 0 to
  /// inputs - 1 in any order (the items are placed by their index, not by where they come).
  std::size_t inputs = 0;
};

/// Our embedding list from an upstream's OpenAI-shaped one (`body` is parsed in place), its items
/// in index order. `usage` is set when the upstream reported it. UpstreamError for a body that is
/// not an embedding list, or whose indexes are not exactly 0 to meta.inputs - 1.
Result<std::string> rewriteEmbeddingList(std::string& body, const EmbeddingMeta& meta,
                                         std::optional<Usage>& usage);

/// Our embedding list from vectors computed in process.
std::string encodeEmbeddingList(const std::vector<std::vector<float>>& vectors,
                                const EmbeddingMeta& meta, const Usage& usage);

}  // namespace tollgate::openai
