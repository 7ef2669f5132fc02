#include "billing/pricing.hpp"

#include <algorithm>

namespace tollgate::billing {

TokenBound chatBound(std::size_t body_bytes, std::int64_t media_parts,
                     std::optional<std::int64_t> request_limit, const config::Model& model) {
  TokenBound b;
  // Both terms are bounded (the body by the gateway's size limit, the parts by the body), so the
  // sum cannot overflow.
  b.prompt = static_cast<std::int64_t>(body_bytes) + media_parts * kMediaPartTokens;
  if (model.max_input_tokens > 0) {
    b.prompt = std::min(b.prompt, model.max_input_tokens);
  }
  b.completion =
      config::outputTokenLimit(request_limit, model.max_output_tokens, model.default_max_tokens);
  return b;
}

TokenBound embeddingBound(std::size_t body_bytes, std::size_t inputs, const config::Model& model) {
  TokenBound b;
  b.prompt = static_cast<std::int64_t>(body_bytes);
  if (model.max_input_tokens > 0) {
    b.prompt = std::min(b.prompt, model.max_input_tokens * static_cast<std::int64_t>(inputs));
  }
  return b;
}

TokenBound rerankBound(std::size_t body_bytes, std::size_t query_bytes, std::size_t documents) {
  // Bounded by the body's size limit, squared at worst: no overflow for any limit below 2 GiB.
  return TokenBound{
      static_cast<std::int64_t>(body_bytes) +
          static_cast<std::int64_t>(query_bytes) * static_cast<std::int64_t>(documents),
      0};
}

std::int64_t audioBoundMs(std::optional<std::int64_t> wav_ms, std::int64_t max_audio_seconds) {
  constexpr std::int64_t kMsPerSecond = 1000;
  return wav_ms ? *wav_ms : max_audio_seconds * kMsPerSecond;  // At most 2^31 s: no overflow.
}

std::optional<money::Pico> audioCost(std::int64_t ms, money::Pico per_second) {
  constexpr std::int64_t kMsPerSecond = 1000;
  const auto whole = money::times(ms / kMsPerSecond, per_second);
  const auto part = money::times(ms % kMsPerSecond, per_second);
  if (!whole || !part) {
    return std::nullopt;
  }
  // The partial second rounded up, without adding to *part (which may be near the maximum).
  return money::plus(*whole, *part / kMsPerSecond + (*part % kMsPerSecond != 0 ? 1 : 0));
}

std::optional<money::Pico> maxCost(const TokenBound& bound, const config::Model& model) {
  return money::maxCharge(model.prices, bound.prompt, bound.completion);
}

std::optional<Error> unpricedAudio(std::int64_t audio_parts, bool audio_output,
                                   const config::Model& model) {
  if (audio_parts > 0 && !model.prices.input_audio) {
    return Error{ErrorKind::InvalidValue,
                 "model \"" + model.id +
                     "\" has no price for audio input (input_audio_cost_per_token), so it does "
                     "not take input_audio content parts",
                 "messages"};
  }
  if (audio_output && !model.prices.has_output_audio) {
    return Error{ErrorKind::InvalidValue,
                 "model \"" + model.id +
                     "\" has no price for audio output (output_audio_cost_per_token), so it "
                     "does not answer with audio",
                 "modalities"};
  }
  return std::nullopt;
}

std::int64_t estimateTokens(std::size_t bytes) {
  return (static_cast<std::int64_t>(bytes) + kBytesPerEstimatedToken - 1) / kBytesPerEstimatedToken;
}

}  // namespace tollgate::billing
