// What a chat request may cost at most (the hold taken before the upstream call), and what an
// answer whose usage the upstream did not report is estimated to have used. Pure arithmetic on
// integer pico-USD; the charge itself is money::charge.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "config/config.hpp"
#include "core/money.hpp"

namespace tollgate::billing {

/// The output bound of a request that sets no limit, for a model that declares none.
inline constexpr std::int64_t kDefaultOutputBound = 4096;
/// Estimates when usage is missing: one token per this many bytes of the request body, or of a
/// whole answer's body; one token per streamed chunk relayed.
inline constexpr std::int64_t kBytesPerEstimatedToken = 4;

/// An upper bound of a request's tokens.
struct TokenBound {
  std::int64_t prompt = 0;
  std::int64_t completion = 0;
};

/// What a content part that is not text (an image, audio, a file) may add to a prompt beyond
/// its bytes: more than the largest image any current model counts (gpt-4o-mini's detailed
/// images reach about 25,500 tokens).
inline constexpr std::int64_t kMediaPartTokens = 32'768;

/// The bound of a chat request: the prompt has at most one token per byte of the request body
/// (a tokenizer never makes more than one token of a byte, and the JSON around each message is
/// longer than a chat template's tokens) plus kMediaPartTokens per content part that is not text,
/// and no more than the model's max_input_tokens when set; the completion at most the request's
/// limit, the model's max_output_tokens, or kDefaultOutputBound, the smallest of those that are
/// set.
TokenBound chatBound(std::size_t body_bytes, std::int64_t media_parts,
                     std::optional<std::int64_t> request_limit, const config::Model& model);

/// The most a request within `bound` can cost at `model`'s prices; nullopt when it does not fit
/// in an int64 (no balance covers it).
std::optional<money::Pico> maxCost(const TokenBound& bound, const config::Model& model);

/// Estimated tokens of a request body, or of a whole answer's body, of `bytes` bytes.
std::int64_t estimateTokens(std::size_t bytes);

}  // namespace tollgate::billing
