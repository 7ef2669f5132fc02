#include "core/prices.hpp"

#include <algorithm>
#include <array>

namespace tollgate::money {
namespace {

/// The sum of count x rate over `terms`, or nullopt on overflow.
template <std::size_t N>
std::optional<Pico> priced(const std::array<std::pair<std::int64_t, Pico>, N>& terms) {
  Pico sum = 0;
  for (const auto& [count, rate] : terms) {
    const auto part = times(count, rate);
    const auto next = part ? plus(sum, *part) : std::nullopt;
    if (!next) {
      return std::nullopt;
    }
    sum = *next;
  }
  return sum;
}

}  // namespace

Pico Rates::maxInput(bool audio) const {
  return std::max({input, cached_input, cache_write, cache_write_1h, audio ? input_audio : 0});
}

Pico Rates::maxOutput() const { return std::max(output, output_audio); }

const Rates& Prices::ratesFor(std::int64_t input_tokens) const {
  const Rates* found = &base;
  for (const Tier& t : tiers) {
    if (input_tokens > t.above_input_tokens) {
      found = &t.rates;
    }
  }
  return *found;
}

Prices flatPrices(Pico input, Pico output) {
  Prices p;
  p.base = Rates{input, output, input, input, input, 0, output};
  return p;
}

Pico charge(const Pricing& p, const usage::Counts& u) {
  if (p.prices == nullptr) {
    return 0;
  }
  const Rates& r = p.prices->ratesFor(u.prompt_tokens);
  std::optional<Pico> sum;
  if (usage::consistent(u)) {
    const std::int64_t uncached =
        u.prompt_tokens - u.cached_tokens - u.cache_write_tokens - u.audio_prompt_tokens;
    const std::int64_t text_out = u.completion_tokens - u.audio_completion_tokens;
    sum = priced(std::array<std::pair<std::int64_t, Pico>, 7>{{
        {uncached, r.input},
        {u.cached_tokens, r.cached_input},
        {u.cache_write_tokens - u.cache_write_1h_tokens, r.cache_write},
        {u.cache_write_1h_tokens, r.cache_write_1h},
        {u.audio_prompt_tokens, r.input_audio},
        {text_out, r.output},
        {u.audio_completion_tokens, r.output_audio},
    }});
  } else {
    sum = priced(std::array<std::pair<std::int64_t, Pico>, 2>{{
        {std::max<std::int64_t>(u.prompt_tokens, 0), r.maxInput(p.prices->input_audio)},
        {std::max<std::int64_t>(u.completion_tokens, 0), r.maxOutput()},
    }});
  }
  return sum && *sum < p.cap ? *sum : p.cap;
}

std::optional<Pico> maxCharge(const Prices& prices, std::int64_t prompt, std::int64_t completion) {
  const auto at = [&](const Rates& r) {
    return priced(std::array<std::pair<std::int64_t, Pico>, 2>{
        {{prompt, r.maxInput(prices.input_audio)}, {completion, r.maxOutput()}}});
  };
  std::optional<Pico> most = at(prices.base);
  for (const Tier& t : prices.tiers) {
    if (prompt <= t.above_input_tokens) {
      break;  // No request within the bound reaches this tier, nor any after it.
    }
    const auto cost = at(t.rates);
    if (!most || !cost) {
      return std::nullopt;
    }
    most = std::max(*most, *cost);
  }
  return most;
}

}  // namespace tollgate::money
