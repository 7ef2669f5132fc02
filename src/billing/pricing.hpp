// What a chat request may cost at most (the hold taken before the upstream call), and what an
// answer whose usage the upstream did not report is estimated to have used. Pure arithmetic on
// integer pico-USD; the charge itself is money::charge.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "config/config.hpp"
#include "core/error.hpp"
#include "core/money.hpp"

namespace tollgate::billing {

/// Estimates when usage is missing: one token per this many bytes of the request body, or of a
/// whole answer's body; one token per streamed chunk relayed.
inline constexpr std::int64_t kBytesPerEstimatedToken = 4;

/// An upper bound of a request's tokens.
struct TokenBound {
  std::int64_t prompt = 0;
  std::int64_t completion = 0;
};

/// No bound (a request whose hold is not counted in tokens).
inline constexpr TokenBound kNoTokenBound{std::numeric_limits<std::int64_t>::max(),
                                          std::numeric_limits<std::int64_t>::max()};

/// What a content part that is not text (an image, audio, a file) may add to a prompt beyond
/// its bytes: more than the largest image any current model counts (gpt-4o-mini's detailed
/// images reach about 25,500 tokens).
inline constexpr std::int64_t kMediaPartTokens = 32'768;

/// The bound of a chat request: the prompt has at most one token per byte of the request body
/// (a tokenizer never makes more than one token of a byte, and the JSON around each message is
/// longer than a chat template's tokens) plus kMediaPartTokens per content part that is not text,
/// and no more than the model's max_input_tokens when set; the completion at most the output
/// limit sent upstream with it (config::outputTokenLimit).
TokenBound chatBound(std::size_t body_bytes, std::int64_t media_parts,
                     std::optional<std::int64_t> request_limit, const config::Model& model);

/// The bound of an embeddings request: at most one token per byte of the body, and no more than
/// the model's max_input_tokens per input when set. Nothing is generated.
TokenBound embeddingBound(std::size_t body_bytes, std::size_t inputs, const config::Model& model);

/// The bound of a rerank request: the query is read once per document (as Cohere counts), and
/// every document once; one token per byte of each.
TokenBound rerankBound(std::size_t body_bytes, std::size_t query_bytes, std::size_t documents);

/// The most milliseconds of audio an upstream can report for a file: `wav_ms` when the file is
/// plain PCM WAV (readWavHeader), whose duration follows from its size; else the model's
/// `max_audio_seconds`, since a compressed file's bytes bound nothing (an hour of silence fits
/// in a few hundred KB).
std::int64_t audioBoundMs(std::optional<std::int64_t> wav_ms, std::int64_t max_audio_seconds);

/// The cost of `ms` milliseconds of audio at `per_second`, rounded up; nullopt on overflow.
std::optional<money::Pico> audioCost(std::int64_t ms, money::Pico per_second);

/// The most a request within `bound` can cost at `model`'s prices; nullopt when it does not fit
/// in an int64 (no balance covers it).
std::optional<money::Pico> maxCost(const TokenBound& bound, const config::Model& model);

/// 400 invalid_value when a chat request carries audio `model` has no price for: `input_audio`
/// content parts (param messages) without input_audio_cost_per_token, or `modalities` asking
/// for audio (param modalities) without output_audio_cost_per_token. Checked before anything is
/// sent: audio priced as text would be charged far below the provider's price.
std::optional<Error> unpricedAudio(std::int64_t audio_parts, bool audio_output,
                                   const config::Model& model);

/// Estimated tokens of a request body, or of a whole answer's body, of `bytes` bytes.
std::int64_t estimateTokens(std::size_t bytes);

}  // namespace tollgate::billing
