// A model's prices per kind of token, with long-context tiers, and the charge of a usage at
// them: the one function both the spend row's cost and the answer's `tollgate::cost` come from,
// so the two agree to the pico-USD. Pure integer arithmetic on pico-USD (money.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/money.hpp"
#include "core/usage.hpp"

namespace tollgate::money {

/// USD per token of each kind, in one tier, every default resolved.
struct Rates {
  Pico input = 0;
  Pico output = 0;
  Pico cached_input = 0;    ///< Cache reads.
  Pico cache_write = 0;     ///< Writes to the 5-minute cache.
  Pico cache_write_1h = 0;  ///< Writes to the 1-hour cache.
  Pico input_audio = 0;     ///< Only when Prices::input_audio.
  Pico output_audio = 0;

  /// The most one input token can cost, of any kind the model takes.
  Pico maxInput(bool audio) const;
  /// The most one output token can cost.
  Pico maxOutput() const;
};

/// Rates that apply when a request's input tokens are strictly more than `above_input_tokens`.
struct Tier {
  std::int64_t above_input_tokens = 0;
  Rates rates;
};

/// A model's prices, as configured (config/: the price keys of [models.X]).
struct Prices {
  Rates base;
  std::vector<Tier> tiers;   ///< In increasing order of above_input_tokens.
  bool input_audio = false;  ///< input_audio_cost_per_token is set: audio input is taken.
  // Which optional prices the configuration sets (GET /v1/models shows only those).
  bool has_cached_input = false;
  bool has_cache_write = false;
  bool has_cache_write_1h = false;
  bool has_output_audio = false;

  /// The rates of a request of `input_tokens` input tokens: the highest tier it is above, else
  /// the base.
  const Rates& ratesFor(std::int64_t input_tokens) const;
};

/// The prices of a model configured with the spec's two only: every input kind at `input`,
/// every output kind at `output`, no audio input.
Prices flatPrices(Pico input, Pico output);

/// What a billed answer pays (prices) and the most it may be charged (its hold). `prices` points
/// into the configuration the request pinned.
struct Pricing {
  const Prices* prices = nullptr;
  Pico cap = 0;
};

/// The charge of `u` at `p`: each kind of token at its rate in the tier of u.prompt_tokens,
/// exactly, and at most p.cap (also when the sum overflows). Counts that are not consistent
/// (usage::consistent) are priced at the most they could cost: every prompt token at the tier's
/// dearest input rate, every completion token at its dearest output rate.
Pico charge(const Pricing& p, const usage::Counts& u);

/// The most a request of at most `prompt` input and `completion` output tokens can cost at
/// `prices`, under any tier and any split of its tokens between kinds (every token at the
/// dearest rate of the dearest tier it can reach); nullopt when it does not fit in an int64.
std::optional<Pico> maxCharge(const Prices& prices, std::int64_t prompt, std::int64_t completion);

}  // namespace tollgate::money
