// The store's money: teams' balances, holds (each gateway's escrow of a team's balance) and the
// spend log with its daily aggregates.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "store/connection.hpp"
#include "store/idempotency_store.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::store {

/// Part of a team's balance held for one request in flight, by one gateway.
struct Hold {
  std::string id;
  std::string team_id;
  std::int64_t amount = 0;  ///< pico-USD
};

/// Whether a hold was taken, and if not why: the team is suspended (or gone), or `available`
/// (balance less what is held) did not cover it.
struct HoldOutcome {
  bool held = false;
  bool team_active = false;
  std::int64_t available = 0;
  std::int64_t extra = 0;  ///< Held beyond the amount asked for, when some was wanted.
  bool gone = false;       ///< The hold to add to was reclaimed: nothing was done.
};

/// What became of a settlement.
enum class SettleOutcome {
  Kept,       ///< Debited out of its hold, the spend row written.
  Reclaimed,  ///< Its hold was gone: debited what the balance had available, up to the cost (the
              ///< rest is the row's `uncollected`), the spend row written.
  Withheld,   ///< Its hold was gone and the balance could not cover it: nothing written.
};

/// One billed request in the spend log.
struct SpendRow {
  std::string request_id;
  std::int64_t created_at = 0;
  std::string team_id;
  std::string team;           ///< Read; when written, the caller's if known (not stored).
  std::string key_public_id;  ///< Empty in open mode and for the playground.
  std::string key_name;       ///< The key's name; read only, empty without a key.
  std::string user_id;        ///< The playground's user, or the key's creator; empty for neither.
  std::string endpoint;
  std::string model;
  std::string provider;
  std::string variant;
  std::string episode_id;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  TokenKinds kinds;              ///< The parts of the two totals by kind.
  std::int64_t cost = 0;         ///< pico-USD debited from the balance
  std::int64_t uncollected = 0;  ///< pico-USD of the priced usage the balance could not cover
  std::vector<std::pair<std::string, std::string>> tags;  ///< Written only; read as tags_json.
  std::string tags_json = "{}";
  std::int64_t status = 0;
  std::int64_t upstream_ms = 0;
  bool streamed = false;
  bool estimated = false;  ///< Usage estimated: the upstream did not report it.
  bool cache_hit = false;
};

/// A charge to settle: its hold, its spend row, whether its answer can still be refused.
struct Settlement {
  std::string hold_id;  ///< Empty: no hold (a cache hit, charged nothing).
  SpendRow row;
  bool withholdable = false;
  /// Completes an Idempotency-Key's claim in the settlement's transaction, when set.
  struct Completion {
    std::string key;
    std::string claim_id;
    /// nullopt: not kept (a ZDR or TEE model): only the digest and the charge's request id stay.
    std::optional<KeptAnswer> answer;
    /// The attempt was not charged a complete answer: the claim is forgotten instead (in the
    /// same transaction, before the client hears of the failure), so a retry is a fresh try.
    bool release = false;
    /// What the team's kept answers may take in all, in bytes (0: no bound): an answer past it
    /// is not kept, as one of a ZDR model is not.
    std::int64_t max_bytes = 0;
  };
  std::optional<Completion> idempotency = {};
  /// The key's budget, when it has one: what the row costs is added to the key's spend in the
  /// window it was admitted in (key_spend), in the same transaction.
  struct KeySpend {
    std::int64_t budget = 0;  ///< pico-USD
    std::int64_t window_start = 0;
  };
  std::optional<KeySpend> key_spend = {};
};

struct SpendFilter {
  std::string team_id = {};
  std::int64_t since_ms = 0;
  std::optional<std::int64_t> until_ms = {};  ///< Only rows before this time.
  std::optional<std::string> model = {};
  std::optional<std::pair<std::string, std::string>> tag = {};
  std::optional<std::string> key_public_id = {};
  std::optional<std::string> user_id = {};
  std::optional<std::string> request_id = {};  ///< Only that request's row.
  /// Newest first, from before this (created_at, request_id) on: the console's pages.
  bool newest_first = false;
  std::optional<std::pair<std::int64_t, std::string>> before = {};
  std::optional<std::int64_t> limit = {};
};

enum class SpendGroup { Day, Model, Key, Tag, User };

/// One group of a spend summary, from the daily aggregates.
struct SpendTotal {
  std::string group;  ///< The day, model, key public id, or tag=value.
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cost = 0;
  TokenKinds kinds;  ///< Sums of each kind.
};

/// Balances, holds and the spend log, in the caller's transaction.
class BillingStore {
 public:
  explicit BillingStore(Connection& c) : c_(&c) {}

  // A hold row is one gateway's reservation for one team (its escrow): the sum of what that
  // gateway's requests in flight may cost, and what it keeps at hand for the next ones.
  /// Adds `h.amount` to hold `h.id` if the team is active and its balance less what is held
  /// covers it; then, if the team still has more than `only_above` available, up to `extra`
  /// more, at most a quarter of what it has left. The hold is made for `gateway_id` when new;
  /// one that is `existing` is added to only while it is still there (else `gone`): a hold that
  /// was reclaimed is never made again.
  HoldOutcome hold(const Hold& h, const std::string& gateway_id, std::int64_t extra,
                   std::int64_t only_above, bool existing);
  /// Takes `amount` back from hold `hold_id` into the balance; false when the hold is gone
  /// (reclaimed). A hold left at zero is removed.
  bool shrinkHold(const std::string& hold_id, std::int64_t amount);
  /// Settles each of `batch`: debits its `row.cost` from the team out of its hold and writes its
  /// spend row, the daily aggregates counting it. When its hold is gone (reclaimed from a gateway
  /// taken for dead) the balance less what is held still never goes below zero: an answer that is
  /// `withholdable` and not covered is Withheld; otherwise what is available is debited and the
  /// rest recorded as uncollected. A settlement without a hold (a cache hit) debits nothing: its
  /// row is written as Kept, its cost recorded as uncollected (it should be 0). A written row's
  /// `idempotency` claim, when set and still its own and running, is completed with it: with its
  /// answer when the team's kept answers stay within the completion's `max_bytes` (claims team
  /// by team, each seeing the ones before; on PostgreSQL not those other gateways are
  /// committing at the same time), else with the charge alone. One
  /// update per hold, per team and per aggregate row serves the whole batch, in two pipelines
  /// (on PostgreSQL, two round trips). Returns each one's outcome, in order; each written row is
  /// left as written (its `cost` what was debited, its `uncollected` what was not). Each debit
  /// that takes a team's balance below an amount of `balance_alerts` (pico-USD) writes its
  /// alert's event to the outbox (AlertStore::balanceCrossings), in the same transaction; each
  /// charge to a key with a budget adds to its spend in its window, and writes an event for each
  /// fraction of `key_alerts_ppm` (parts per million of the budget) that spend crosses.
  std::vector<SettleOutcome> settle(std::span<Settlement> batch,
                                    std::span<const std::int64_t> balance_alerts = {},
                                    std::span<const std::int64_t> key_alerts_ppm = {});
  /// Releases the holds of gateways not seen for `alive_window_ms`; returns how many.
  std::int64_t reclaimHolds(std::int64_t alive_window_ms);
  /// Deletes raw spend rows older than `before_ms` (aggregates stay); returns how many.
  std::int64_t pruneSpend(std::int64_t before_ms);
  std::vector<SpendRow> listSpend(const SpendFilter& f);
  /// Totals from the daily aggregates since `since_day` ("YYYY-MM-DD", UTC).
  std::vector<SpendTotal> summarizeSpend(const std::string& team_id, SpendGroup by,
                                         const std::string& since_day);
  /// Adds `amount` to the team's balance.
  void topUp(const std::string& team_id, std::int64_t amount);

 private:
  /// Appends to `out` the statements that write the spend rows and add them to their daily
  /// aggregates, one update per row of those.
  void spendWrites(std::span<const SpendRow* const> rows, std::vector<Statement>& out);
  /// Appends to `out` the statements that complete `done`'s claim with the charge of `row` (and
  /// its answer, within the team's bound), adding what it keeps to the team's sum.
  void completeClaim(const SpendRow& row, const Settlement::Completion& done,
                     std::vector<Statement>& out);

  Connection* c_;
};

}  // namespace tollgate::store
