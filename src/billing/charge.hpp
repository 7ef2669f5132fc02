// One request's money, from admission to settlement. Admit takes a hold on the team's balance
// for the most the request can cost (403 insufficient_balance when the balance less what is
// already held cannot cover it); settle turns the hold into the real charge and a spend row,
// committed before the answer's last byte; a Charge that ends unsettled releases its hold. A
// dryrun is admitted the same way (its hold taken) and settles nothing, so the hold goes back.
// An unbilled request (open mode without open_team) gets a Charge that does nothing.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <optional>

#include "billing/ledger.hpp"
#include "billing/pricing.hpp"
#include "billing/tags.hpp"
#include "core/result.hpp"
#include "exchange/request_context.hpp"
#include "exchange/settlement.hpp"
#include "exchange/transcript.hpp"

namespace tollgate::billing {

/// What the spend row says of a request, besides what its context holds.
struct RequestFacts {
  std::string endpoint;  ///< "chat", "embedding", "rerank" or "transcription"
  std::string episode_id;
  Tags tags;
  bool streamed = false;
  std::size_t body_bytes = 0;
  /// Transcriptions: the audio's duration when the upstream does not report it: the hold's bound
  /// (a plain PCM WAV's duration, else the model's max_audio_seconds).
  std::int64_t audio_estimate_ms = 0;
  /// The most tokens the request can use, as its hold counts them (for a function, the largest
  /// over its variants): reported counts above these are clamped to them, and the row flagged.
  TokenBound bound = kNoTokenBound;
};

/// Writes the spend row of a request answered from the inference cache: its counts (ctx.usage),
/// cost 0, flagged a hit; written with the ledger's next commit, no one waiting. Nothing for an
/// unbilled request or a dryrun.
void recordCacheHit(Ledger* ledger, const exchange::RequestContext& ctx, const std::string& team_id,
                    const config::Model& model, const RequestFacts& facts);

class Charge final : public exchange::Settlement {
 public:
  /// A charge that bills nothing.
  Charge() = default;
  ~Charge() override;
  Charge(const Charge&) = delete;
  Charge& operator=(const Charge&) = delete;

  /// Admits a request to `model` billed to `team_id` (empty, or no ledger: unbilled) for at most
  /// `max_cost` (nullopt: more than any balance). The error is 403 insufficient_balance or
  /// team_suspended, or 503 when the store cannot be reached.
  static boost::asio::awaitable<Result<std::unique_ptr<Charge>>> admit(
      Ledger* ledger, exchange::RequestContext& ctx, const config::Model& model,
      std::string team_id, std::optional<money::Pico> max_cost, RequestFacts facts);

  /// What an answer of `model` is costed at (its prices, capped at the hold): each planned
  /// route's prices, which the response's usage reports; nullopt when nothing is charged.
  std::optional<money::Pricing> pricingFor(const config::Model& model) const;

  /// Charges what was produced at the prices of the model that answered (the exchange record's
  /// `served`, else the model admitted), and writes the spend row naming it and its variant.
  boost::asio::awaitable<bool> settle(const exchange::Produced& produced) override;

  /// Has the settlement of a complete answer (200) also complete an Idempotency-Key's claim,
  /// in its transaction: with what the client was sent (`transcript`, and the settlement's
  /// tail), or only the charge when `keep_answer` is false (a model that retains no data) or
  /// the team's kept answers would pass [cache] team_max_bytes. Any
  /// other settlement (a failure, a withheld answer) releases the claim in its transaction,
  /// before the client hears of it.
  void completeClaim(std::string key, std::string claim_id, const exchange::Transcript& transcript,
                     bool keep_answer);
  /// Whether a committed settlement completed or released the claim.
  bool claimSettled() const { return claim_settled_; }

 private:
  struct ClaimToComplete {
    std::string key;
    std::string claim_id;
    const exchange::Transcript* transcript = nullptr;
    bool keep_answer = true;
  };

  /// The claim's completion for a settlement of `produced`, if it completes it.
  std::optional<store::Settlement::Completion> completion(const exchange::Produced& produced,
                                                          bool left) const;

  Charge(Ledger& ledger, exchange::RequestContext& ctx, const config::Model& model,
         store::Hold hold, RequestFacts facts);

  Ledger* ledger_ = nullptr;
  exchange::RequestContext* ctx_ = nullptr;
  const config::Model* model_ = nullptr;
  store::Hold hold_;
  RequestFacts facts_;
  std::optional<bool> settled_;  ///< The outcome of the one settlement.
  std::optional<ClaimToComplete> claim_;
  bool claim_settled_ = false;
};

}  // namespace tollgate::billing
