#include "billing/charge.hpp"

#include <algorithm>
#include <boost/asio/this_coro.hpp>

#include "billing/pricing.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::billing {
namespace {

namespace asio = boost::asio;

constexpr int kStatusClientLeft = 499;
constexpr int kStatusOk = 200;

std::string topUpHint(const exchange::RequestContext& ctx) {
  return "; top it up with: tollgate admin teams topup " +
         (ctx.caller.team.empty() ? std::string("TEAM") : ctx.caller.team) + " USD";
}

/// The spend row of a request `ctx` served by `model`, billed to `team_id`, with the counts of
/// its record (ctx.usage) and no cost yet.
store::SpendRow spendRow(const exchange::RequestContext& ctx, const std::string& team_id,
                         const config::Model& model, const RequestFacts& facts) {
  store::SpendRow row;
  row.request_id = ctx.request_id;
  row.created_at = store::nowMs();
  row.team_id = team_id;
  row.team = ctx.caller.team;
  row.key_public_id = ctx.caller.key_public_id;
  row.user_id = ctx.caller.user_id;
  row.endpoint = facts.endpoint;
  row.model = model.id;
  row.provider = ctx.provider;
  row.variant = ctx.variant;
  row.episode_id = facts.episode_id;
  row.prompt_tokens = ctx.usage.prompt_tokens;
  row.completion_tokens = ctx.usage.completion_tokens;
  row.kinds = store::kindsOf(ctx.usage);
  row.tags = facts.tags;
  row.tags_json = tagsJson(facts.tags);
  row.streamed = facts.streamed;
  return row;
}

}  // namespace

void recordCacheHit(Ledger* ledger, const exchange::RequestContext& ctx, const std::string& team_id,
                    const config::Model& model, const RequestFacts& facts) {
  if (ledger == nullptr || team_id.empty() || ctx.dryrun) {
    return;
  }
  store::SpendRow row = spendRow(ctx, team_id, model, facts);
  row.status = kStatusOk;  // A hit is a complete answer.
  row.cache_hit = true;
  ledger->record(std::move(row));
}

Charge::Charge(Ledger& ledger, exchange::RequestContext& ctx, const config::Model& model,
               store::Hold hold, RequestFacts facts)
    : ledger_(&ledger),
      ctx_(&ctx),
      model_(&model),
      hold_(std::move(hold)),
      facts_(std::move(facts)) {}

Charge::~Charge() {
  if (ledger_ != nullptr && !settled_.value_or(false)) {
    ledger_->release(hold_);
  }
}

asio::awaitable<Result<std::unique_ptr<Charge>>> Charge::admit(
    Ledger* ledger, exchange::RequestContext& ctx, const config::Model& model, std::string team_id,
    std::optional<money::Pico> max_cost, RequestFacts facts) {
  if (ledger == nullptr || team_id.empty()) {
    co_return std::make_unique<Charge>();
  }
  if (!max_cost) {
    co_return Error{ErrorKind::InsufficientBalance,
                    "this request may cost more than any balance can hold; lower max_tokens", ""};
  }
  const Ledger::HoldReply reply = co_await ledger->hold(std::move(team_id), *max_cost);
  switch (reply.status) {
    case Ledger::HoldStatus::Held:
      co_return std::unique_ptr<Charge>(
          new Charge(*ledger, ctx, model, reply.hold, std::move(facts)));
    case Ledger::HoldStatus::Insufficient:
      co_return Error{ErrorKind::InsufficientBalance,
                      "the team's available balance is " + money::formatUsd(reply.available) +
                          " USD and this request may cost up to " + money::formatUsd(*max_cost) +
                          " USD: short by " + money::formatUsd(*max_cost - reply.available) +
                          " USD" + topUpHint(ctx),
                      ""};
    case Ledger::HoldStatus::Suspended:
      co_return Error{ErrorKind::TeamSuspended, "the API key's team is suspended", ""};
    case Ledger::HoldStatus::Unavailable:
      break;
  }
  co_return Error{ErrorKind::BillingUnavailable,
                  "the billing store cannot be reached; try again shortly", ""};
}

std::optional<money::Pricing> Charge::pricingFor(const config::Model& model) const {
  if (ledger_ == nullptr || ctx_->dryrun) {
    return std::nullopt;
  }
  return money::Pricing{&model.prices, hold_.amount};
}

void Charge::completeClaim(std::string key, std::string claim_id,
                           const exchange::Transcript& transcript, bool keep_answer) {
  claim_ = ClaimToComplete{std::move(key), std::move(claim_id), &transcript, keep_answer};
}

std::optional<store::Settlement::Completion> Charge::completion(const exchange::Produced& produced,
                                                                bool left) const {
  if (!claim_) {
    return std::nullopt;
  }
  store::Settlement::Completion done{claim_->key, claim_->claim_id, std::nullopt};
  done.max_bytes = ctx_->config.cache.team_max_bytes;
  if (left || produced.status != kStatusOk) {
    done.release = true;  // Only a complete answer is kept: a failure releases the key.
    return done;
  }
  if (claim_->keep_answer) {
    const exchange::Transcript& sent = *claim_->transcript;
    store::KeptAnswer answer;
    answer.status = produced.status;
    answer.streamed = sent.streamed;
    answer.content_type = sent.streamed ? sent.content_type : std::string(produced.content_type);
    answer.body = sent.streamed ? sent.body : std::string();
    answer.body += produced.tail;
    done.answer = std::move(answer);
  }
  return done;
}

asio::awaitable<bool> Charge::settle(const exchange::Produced& produced) {
  if (settled_) {
    co_return *settled_;
  }
  if (ledger_ == nullptr) {
    settled_ = true;
    co_return true;
  }
  if (ctx_->dryrun) {
    co_return true;  // Nothing charged or written; the hold goes back when this Charge ends.
  }
  const config::Model& model = ctx_->served != nullptr ? *ctx_->served : *model_;
  exchange::TokenUsage usage;
  bool estimated = false;
  if (produced.usage) {
    usage = *produced.usage;
  } else if (model.cost_per_audio_second == 0 &&
             (produced.chunks > 0 || produced.answer_bytes > 0)) {
    // The answer reached the client (in part) without its final usage: estimate it, never below
    // the counts reported so far, and say so in the row. A model priced per audio second is
    // charged for its seconds below, not for guessed tokens.
    // The kinds reported so far (an Anthropic stream's cache reads and writes) are kept.
    estimated = true;
    usage = produced.interim_usage.value_or(exchange::TokenUsage{});
    usage.prompt_tokens = std::max(usage.prompt_tokens, estimateTokens(facts_.body_bytes));
    usage.completion_tokens =
        std::max(usage.completion_tokens,
                 produced.chunks > 0 ? produced.chunks : estimateTokens(produced.answer_bytes));
  }
  // Counts above what the request could use are not what it used, whether an upstream reported
  // them or they were estimated from chunks it sent past its limit: clamped, and flagged.
  if (usage.prompt_tokens > facts_.bound.prompt ||
      usage.completion_tokens > facts_.bound.completion) {
    usage.prompt_tokens = std::min(usage.prompt_tokens, facts_.bound.prompt);
    usage.completion_tokens = std::min(usage.completion_tokens, facts_.bound.completion);
    estimated = true;
  }
  // Kinds that do not fit in their totals are priced at the most they could cost
  // (money::charge), and flagged.
  estimated = estimated || !usage::consistent(usage);
  // A client that hung up cancels the handler; what it was sent is still charged, and the row
  // says that the client left.
  const bool left =
      (co_await asio::this_coro::cancellation_state).cancelled() != asio::cancellation_type::none;
  ctx_->usage = usage;
  store::SpendRow row = spendRow(*ctx_, hold_.team_id, model, facts_);
  row.cost = money::charge(*pricingFor(model), usage);
  if (model.cost_per_audio_second > 0 && produced.status == kStatusOk) {
    std::int64_t audio_ms = produced.audio_ms;
    if (audio_ms == 0) {
      audio_ms = facts_.audio_estimate_ms;
      estimated = true;
    }
    // More seconds than the hold's bound (nothing sent upstream can limit them): the hold is
    // charged, and the row flagged.
    const auto audio = audioCost(audio_ms, model.cost_per_audio_second);
    const auto sum = audio ? money::plus(row.cost, *audio) : std::nullopt;
    if (!sum || *sum > hold_.amount) {
      estimated = true;
    }
    row.cost = sum && *sum < hold_.amount ? *sum : hold_.amount;
  }
  row.status = left ? kStatusClientLeft : produced.status;
  auto upstream = ctx_->upstream;
  if (ctx_->attempt_started != exchange::RequestContext::Clock::time_point{}) {
    upstream += std::chrono::duration_cast<std::chrono::microseconds>(
        exchange::RequestContext::Clock::now() - ctx_->attempt_started);
  }
  row.upstream_ms = std::chrono::duration_cast<std::chrono::milliseconds>(upstream).count();
  row.estimated = estimated;
  ctx_->cost = row.cost;
  // An answer of which nothing reached the client can still be refused, as any whose charge
  // failed; one the client left, the upstream cut or a stream whose content the client has is
  // charged what the balance covers, should its hold be gone.
  const bool withholdable = !left && produced.status == kStatusOk && !produced.relayed;
  auto idempotency = completion(produced, left);
  const bool claimed = idempotency.has_value();
  std::optional<store::Settlement::KeySpend> key_spend;
  if (ctx_->caller.budget && ctx_->budget_window_start != 0) {
    key_spend =
        store::Settlement::KeySpend{ctx_->caller.budget->pico_usd, ctx_->budget_window_start};
  }
  settled_ = co_await ledger_->settle(hold_, std::move(row), withholdable, std::move(idempotency),
                                      key_spend);
  // A withheld answer (false) released the claim in the same commit.
  claim_settled_ = claimed && *settled_;
  co_return *settled_;
}

}  // namespace tollgate::billing
