// The store's SQL for balances, holds and the spend log.
#include "store/billing_store.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "core/base64.hpp"
#include "core/text.hpp"
#include "store/alert_store.hpp"
#include "store/token_kinds.hpp"

namespace tollgate::store {
namespace {

/// The spend log's columns as read, the kinds last (from kKindsColumn on).
std::string spendColumns() {
  return "SELECT s.request_id, s.created_at, s.team_id, t.name, s.key_public_id, s.endpoint, "
         "s.model, s.provider, s.variant, s.episode_id, s.prompt_tokens, s.completion_tokens, "
         "s.cost, s.tags, s.status, s.upstream_ms, s.streamed, s.estimated, s.cache_hit, "
         "s.uncollected, s.user_id, COALESCE(k.name, '')" +
         kindColumns("s.") +
         " FROM spend s JOIN teams t ON t.id = s.team_id LEFT JOIN api_keys k ON k.public_id = "
         "s.key_public_id ";
}
constexpr std::size_t kKindsColumn = 22;

constexpr std::size_t kSpendColumns = 20;

/// The statement that writes one spend row: its kSpendColumns columns, then the kinds.
std::string insertSpend() {
  return "INSERT INTO spend (request_id, created_at, team_id, key_public_id, endpoint, model, "
         "provider, variant, episode_id, prompt_tokens, completion_tokens, cost, tags, status, "
         "upstream_ms, streamed, estimated, cache_hit, uncollected, user_id" +
         kindColumns() +
         ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, "
         "$18, $19, $20" +
         kindPlaceholders(21) + ")";
}

SpendRow spendRow(const Row& r) {
  SpendRow s;
  s.request_id = r.text(0);
  s.created_at = r.integer(1);
  s.team_id = r.text(2);
  s.team = r.text(3);
  s.key_public_id = r.text(4);
  s.endpoint = r.text(5);
  s.model = r.text(6);
  s.provider = r.text(7);
  s.variant = r.text(8);
  s.episode_id = r.text(9);
  s.prompt_tokens = r.integer(10);
  s.completion_tokens = r.integer(11);
  s.cost = r.integer(12);
  s.tags_json = r.text(13);
  s.status = r.integer(14);
  s.upstream_ms = r.integer(15);
  s.streamed = r.integer(16) != 0;
  s.estimated = r.integer(17) != 0;
  s.cache_hit = r.integer(18) != 0;
  s.uncollected = r.integer(19);
  s.user_id = r.text(20);
  s.key_name = r.text(21);
  s.kinds = readKinds(r, kKindsColumn);
  return s;
}

/// The column a summary groups by; `by` is checked by the caller's enum.
std::string_view groupColumn(SpendGroup by) {
  switch (by) {
    case SpendGroup::Day:
      return "day";
    case SpendGroup::Model:
      return "model";
    case SpendGroup::Key:
      return "key_public_id";
    case SpendGroup::Tag:
      return "tag || '=' || value";
    case SpendGroup::User:
      return "COALESCE(u.email, user_id)";  // The user's email.
  }
  return "day";
}

/// The sums one aggregate row gains.
struct Sums {
  std::int64_t requests = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cost = 0;
  TokenKinds kinds;
  void add(const SpendRow& s) {
    // Counts are clamped to their request's bound when read, and kinds are parts of them: a
    // batch's sums stay far from the limits of a BIGINT.
    ++requests;
    prompt_tokens += s.prompt_tokens;
    completion_tokens += s.completion_tokens;
    cost += s.cost;
    for (const auto& [name, field] : kTokenKinds) {
      kinds.*field += s.kinds.*field;
    }
  }
};

/// Appends one upsert per row of daily aggregate `table` (keyed by `columns`, in the order of
/// each key's values) that adds its sums.
/// The upsert that adds a batch's sums to one of the daily aggregates, keyed by `columns`.
std::string aggregateSql(std::string_view table, std::string_view columns,
                         std::size_t key_columns) {
  std::vector<std::string> summed{"requests", "prompt_tokens", "completion_tokens", "cost"};
  for (const auto& [kind, field] : kTokenKinds) {
    summed.emplace_back(kind);
  }
  const std::string t(table);
  std::string names(columns);
  std::string values;
  std::string sums;
  for (std::size_t i = 1; i <= key_columns + summed.size(); ++i) {
    values += (i == 1 ? "$" : ", $") + std::to_string(i);
  }
  for (const std::string& c : summed) {
    names += ", " + c;
    sums += (sums.empty() ? "" : ", ") + c + " = " + t + "." + c + " + excluded." + c;
  }
  return "INSERT INTO " + t + " (" + names + ") VALUES (" + values + ") ON CONFLICT (" +
         std::string(columns) + ") DO UPDATE SET " + sums;
}

/// A batch's sums for one daily aggregate, by its key's values (views into the batch's rows).
template <std::size_t N>
using Groups = std::map<std::array<std::string_view, N>, Sums>;

/// One upsert of `sql` (aggregateSql's) for each key of `groups`.
template <std::size_t N>
void addToAggregates(const std::string& sql, const Groups<N>& groups, std::vector<Statement>& out) {
  for (const auto& [key, sum] : groups) {
    std::vector<Param> params(key.begin(), key.end());
    params.insert(params.end(), {sum.requests, sum.prompt_tokens, sum.completion_tokens, sum.cost});
    appendKinds(sum.kinds, params);
    out.push_back({sql, std::move(params)});
  }
}

}  // namespace

void BillingStore::completeClaim(const SpendRow& row, const Settlement::Completion& done,
                                 std::vector<Statement>& out) {
  // If the claim is still the attempt's and running (else it was released, or taken over from a
  // gateway taken for dead). When not kept, only its request id stays. An answer is kept when the
  // team's sum (as committed, with this transaction's own additions) leaves room for it; else
  // its body is never written.
  const std::optional<KeptAnswer>& a = done.answer;
  // One larger than the bound alone never fits: its body is not even sent.
  const bool may_fit =
      a && (done.max_bytes == 0 || static_cast<std::int64_t>(a->body.size()) <= done.max_bytes);
  const std::string fits =
      "COALESCE((SELECT b.bytes FROM idempotency_bytes b WHERE b.team_id = $9), 0) + $8 <= $12";
  out.push_back(
      {"UPDATE idempotency_keys SET state = 'completed', completed_at = $1, request_id = $2, "
       "status = $3, content_type = $4, streamed = $5, kept = CASE WHEN $6 = 0 THEN 0 WHEN " +
           fits + " THEN 1 ELSE " + std::to_string(IdempotencyStore::kKeptOverBound) +
           " END, body = CASE WHEN " + fits + " THEN $7 END, bytes = CASE WHEN " + fits +
           " THEN $8 ELSE 0 END WHERE team_id = $9 AND key = $10 AND claim_id = $11 AND state = "
           "'running'",
       {row.created_at, row.request_id, a ? Param(a->status) : Param(),
        a ? Param(a->content_type) : Param(), a ? Param(std::int64_t{a->streamed}) : Param(),
        std::int64_t{a ? 1 : 0}, may_fit ? Param(base64::encode(a->body)) : Param(),
        static_cast<std::int64_t>(a ? a->body.size() : 0), row.team_id, done.key, done.claim_id,
        done.max_bytes > 0 ? done.max_bytes : std::numeric_limits<std::int64_t>::max()}});
  if (a) {
    out.push_back(
        {"INSERT INTO idempotency_bytes (team_id, bytes) SELECT team_id, bytes FROM "
         "idempotency_keys WHERE team_id = $1 AND key = $2 AND claim_id = $3 AND bytes > 0 ON "
         "CONFLICT (team_id) DO UPDATE SET bytes = idempotency_bytes.bytes + excluded.bytes",
         {row.team_id, done.key, done.claim_id}});
  }
}

HoldOutcome BillingStore::hold(const Hold& h, const std::string& gateway_id, std::int64_t extra,
                               std::int64_t only_above, bool existing) {
  // The hold's row first (locked, as settlements and reclaims take them): requests admitted on a
  // hold that was reclaimed meanwhile settle as such, never into a row made again under its id.
  if (existing &&
      c_->query("UPDATE holds SET amount = amount WHERE id = $1 RETURNING 1", {h.id}).empty()) {
    return {.gone = true};
  }
  const Rows held = c_->query(
      "UPDATE teams SET reserved = reserved + $1 WHERE id = $2 AND state = 'active' AND "
      "balance - reserved >= $1 RETURNING balance - reserved",
      {h.amount, h.team_id});
  if (!held.empty()) {
    // The row is this transaction's now: what is left cannot change before the second update.
    const std::int64_t left = held.front().integer(0);
    extra = left > only_above ? std::min(extra, left / 4) : 0;
    if (extra > 0) {
      c_->query("UPDATE teams SET reserved = reserved + $1 WHERE id = $2", {extra, h.team_id});
    }
    c_->query(
        "INSERT INTO holds (id, team_id, gateway_id, amount, created_at) VALUES ($1, $2, $3, $4, "
        "$5) ON CONFLICT (id) DO UPDATE SET amount = holds.amount + excluded.amount",
        {h.id, h.team_id, gateway_id, h.amount + std::max<std::int64_t>(extra, 0), nowMs()});
    return {true, true, left + h.amount, std::max<std::int64_t>(extra, 0)};
  }
  const Rows team = c_->query(
      "SELECT balance - reserved, state = 'active' FROM teams WHERE id = $1", {h.team_id});
  if (team.empty()) {
    return {false, false, 0};
  }
  const std::string& active = team.front().text(1);
  return {false, active == "1" || active == "t", team.front().integer(0)};
}

bool BillingStore::shrinkHold(const std::string& hold_id, std::int64_t amount) {
  // Locks the row and reads it: never more is taken back than it holds (after a commit whose
  // outcome was lost, the gateway may count a little more at hand than the store does).
  const Rows row = c_->query(
      "UPDATE holds SET amount = amount WHERE id = $1 RETURNING team_id, amount", {hold_id});
  if (row.empty()) {
    return false;
  }
  const std::int64_t held = row[0].integer(1);
  const std::int64_t take = std::clamp<std::int64_t>(amount, 0, std::max<std::int64_t>(held, 0));
  c_->query("UPDATE teams SET reserved = reserved - $1 WHERE id = $2", {take, row[0].text(0)});
  if (held - take == 0) {
    c_->query("DELETE FROM holds WHERE id = $1", {hold_id});
  } else {
    c_->query("UPDATE holds SET amount = amount - $1 WHERE id = $2", {take, hold_id});
  }
  return true;
}

std::vector<SettleOutcome> BillingStore::settle(std::span<Settlement> batch,
                                                std::span<const std::int64_t> balance_alerts,
                                                std::span<const std::int64_t> key_alerts_ppm) {
  // Each hold gives the sum of its charges in one update, and each team is debited once; a hold
  // that is gone has its charges settled one by one below. Holds, then teams, each in key order.
  std::map<std::string, std::int64_t> by_hold;
  for (const Settlement& s : batch) {
    if (!s.hold_id.empty()) {
      by_hold[s.hold_id] += s.row.cost;  // At most what the holds reserved: within a balance.
    }
  }
  std::vector<Statement> holds;
  for (const auto& [hold_id, sum] : by_hold) {
    holds.push_back(
        {"UPDATE holds SET amount = amount - $1 WHERE id = $2 RETURNING team_id", {sum, hold_id}});
  }
  const std::vector<Rows> held = holds.empty() ? std::vector<Rows>{} : c_->pipeline(holds);
  std::map<std::string, std::int64_t> by_team;
  std::set<std::string> gone;
  auto hold = by_hold.begin();
  for (const Rows& r : held) {
    if (r.empty()) {
      gone.insert(hold->first);
    } else {
      by_team[r[0].text(0)] += hold->second;
    }
    ++hold;
  }
  std::vector<Statement> writes;
  const std::int64_t now = balance_alerts.empty() ? 0 : nowMs();
  for (const auto& [team_id, sum] : by_team) {
    writes.push_back(
        {"UPDATE teams SET balance = balance - $1, reserved = reserved - $1 WHERE id = $2",
         {sum, team_id}});
    if (sum > 0 && !balance_alerts.empty()) {
      writes.push_back(AlertStore::balanceCrossings(team_id, sum, balance_alerts, now));
    }
  }
  std::vector<SettleOutcome> outcomes(batch.size(), SettleOutcome::Kept);
  std::vector<const SpendRow*> rows;
  rows.reserve(batch.size());
  for (std::size_t i = 0; i < batch.size(); ++i) {
    Settlement& s = batch[i];
    if (s.hold_id.empty() && s.row.cost != 0) {
      // Nothing was held, so nothing is debited: the row says so.
      s.row.uncollected += s.row.cost;
      s.row.cost = 0;
      rows.push_back(&s.row);
      continue;
    }
    if (s.hold_id.empty() || !gone.contains(s.hold_id)) {
      rows.push_back(&s.row);
      continue;
    }
    // Reclaimed while this gateway was taken for dead, and released whole: other requests may
    // have been admitted on that money since. Only what the team has available now is taken.
    const Rows team =
        c_->query("UPDATE teams SET balance = balance WHERE id = $1 RETURNING balance - reserved",
                  {s.row.team_id});
    const std::int64_t available = team.empty() ? 0 : std::max<std::int64_t>(team[0].integer(0), 0);
    const std::int64_t covered = std::min(s.row.cost, available);
    if (covered < s.row.cost && s.withholdable) {
      outcomes[i] = SettleOutcome::Withheld;
      continue;
    }
    c_->query("UPDATE teams SET balance = balance - $1 WHERE id = $2", {covered, s.row.team_id});
    if (covered > 0 && !balance_alerts.empty()) {
      const Statement alerts =
          AlertStore::balanceCrossings(s.row.team_id, covered, balance_alerts, nowMs());
      c_->query(alerts.sql, alerts.params);
    }
    s.row.uncollected = s.row.cost - covered;
    s.row.cost = covered;
    rows.push_back(&s.row);
    outcomes[i] = SettleOutcome::Reclaimed;
  }
  spendWrites(rows, writes);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const Settlement& s = batch[i];
    if (!s.key_spend || s.row.cost <= 0 || outcomes[i] == SettleOutcome::Withheld) {
      continue;
    }
    writes.push_back(
        {"INSERT INTO key_spend (key_public_id, window_start, spent) VALUES ($1, $2, $3) "
         "ON CONFLICT (key_public_id, window_start) DO UPDATE SET spent = key_spend.spent + $3",
         {s.row.key_public_id, s.key_spend->window_start, s.row.cost}});
    if (!key_alerts_ppm.empty()) {
      writes.push_back(AlertStore::keyBudgetCrossings(
          {s.row.team_id, s.row.key_public_id, s.key_spend->window_start, s.key_spend->budget},
          s.row.cost, key_alerts_ppm, nowMs()));
    }
  }
  // Claims team by team: each team's sum of kept answers is locked in key order, as teams are.
  std::vector<std::size_t> by_team_order(batch.size());
  std::iota(by_team_order.begin(), by_team_order.end(), std::size_t{0});
  std::stable_sort(by_team_order.begin(), by_team_order.end(), [&](std::size_t a, std::size_t b) {
    return batch[a].row.team_id < batch[b].row.team_id;
  });
  for (const std::size_t i : by_team_order) {
    const auto& claim = batch[i].idempotency;
    if (claim && (claim->release || outcomes[i] == SettleOutcome::Withheld)) {
      // Not a complete answer charged: the claim goes, and the client's retry is a fresh try.
      writes.push_back(
          {"DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND "
           "claim_id = $3 AND state = 'running'",
           {batch[i].row.team_id, claim->key, claim->claim_id}});
    } else if (claim) {
      completeClaim(batch[i].row, *claim, writes);
    }
  }
  c_->pipeline(writes);
  return outcomes;
}

void BillingStore::spendWrites(std::span<const SpendRow* const> rows, std::vector<Statement>& out) {
  // The rows' text is borrowed, not copied: the caller runs `out` while it has them.
  Groups<4> daily;                // team, day, model, key
  Groups<4> tags;                 // team, day, tag, value
  Groups<3> users;                // team, day, user
  std::vector<std::string> days;  // UTC days, one per day the batch's rows fall on
  days.reserve(rows.size());      // Never moved: the groups' keys point into them.
  std::int64_t last_day = std::numeric_limits<std::int64_t>::min();
  static const std::string insert = insertSpend();
  for (const SpendRow* row : rows) {
    const SpendRow& s = *row;
    std::vector<Param> params;
    params.reserve(kSpendColumns + kTokenKinds.size());
    params.insert(params.end(), {Param::borrowed(s.request_id),
                                 s.created_at,
                                 Param::borrowed(s.team_id),
                                 Param::borrowed(s.key_public_id),
                                 Param::borrowed(s.endpoint),
                                 Param::borrowed(s.model),
                                 Param::borrowed(s.provider),
                                 Param::borrowed(s.variant),
                                 Param::borrowed(s.episode_id),
                                 s.prompt_tokens,
                                 s.completion_tokens,
                                 s.cost,
                                 Param::borrowed(s.tags_json),
                                 s.status,
                                 s.upstream_ms,
                                 std::int64_t{s.streamed},
                                 std::int64_t{s.estimated},
                                 std::int64_t{s.cache_hit},
                                 s.uncollected,
                                 Param::borrowed(s.user_id)});
    appendKinds(s.kinds, params);
    out.push_back({insert, std::move(params)});
    const std::int64_t day_number =
        s.created_at / kMsPerDay - (s.created_at % kMsPerDay < 0 ? 1 : 0);
    if (day_number != last_day) {
      days.push_back(text::utcTimestamp(s.created_at).substr(0, 10));  // UTC day
      last_day = day_number;
    }
    const std::string_view day = days.back();
    for (const auto& [tag, value] : s.tags) {
      tags[{s.team_id, day, tag, value}].add(s);
    }
    if (!s.user_id.empty()) {
      users[{s.team_id, day, s.user_id}].add(s);
    }
    daily[{s.team_id, day, s.model, s.key_public_id}].add(s);
  }
  // Written once: building them took more than the batch's own rows on the billed path.
  static const std::string daily_sql =
      aggregateSql("spend_daily", "team_id, day, model, key_public_id", 4);
  static const std::string tags_sql =
      aggregateSql("spend_daily_tags", "team_id, day, tag, value", 4);
  static const std::string users_sql =
      aggregateSql("spend_daily_users", "team_id, day, user_id", 3);
  addToAggregates(daily_sql, daily, out);
  addToAggregates(tags_sql, tags, out);
  addToAggregates(users_sql, users, out);
}

std::int64_t BillingStore::reclaimHolds(std::int64_t alive_window_ms) {
  std::int64_t n = 0;
  for (const Row& r :
       c_->query("DELETE FROM holds WHERE gateway_id NOT IN (SELECT id FROM "
                 "gateways WHERE seen_at >= " +
                     std::string(c_->nowMsSql()) + " - $1) RETURNING team_id, amount",
                 {alive_window_ms})) {
    c_->query("UPDATE teams SET reserved = reserved - $1 WHERE id = $2", {r.integer(1), r.text(0)});
    ++n;
  }
  return n;
}

std::int64_t BillingStore::pruneSpend(std::int64_t before_ms) {
  // Team by team, along the index the listings use (no index on time alone to keep up to date).
  std::int64_t n = 0;
  for (const Row& team : c_->query("SELECT id FROM teams")) {
    n += static_cast<std::int64_t>(
        c_->query("DELETE FROM spend WHERE team_id = $1 AND created_at < $2 RETURNING 1",
                  {team.text(0), before_ms})
            .size());
  }
  return n;
}

void BillingStore::topUp(const std::string& team_id, std::int64_t amount) {
  c_->query("UPDATE teams SET balance = balance + $1 WHERE id = $2", {amount, team_id});
}

std::vector<SpendRow> BillingStore::listSpend(const SpendFilter& f) {
  std::string sql = spendColumns();
  sql += "WHERE s.team_id = $1 AND s.created_at >= $2";
  std::vector<Param> params{f.team_id, f.since_ms};
  if (f.model) {
    params.emplace_back(*f.model);
    sql += " AND s.model = $" + std::to_string(params.size());
  }
  if (f.tag) {
    params.emplace_back(f.tag->first);
    params.emplace_back(f.tag->second);
    const std::string name = "$" + std::to_string(params.size() - 1);
    const std::string value = "$" + std::to_string(params.size());
    // The team's rows in the time range are scanned for the tag in their JSON object.
    sql += c_->engine() == Engine::Sqlite
               ? " AND EXISTS (SELECT 1 FROM json_each(s.tags) j WHERE j.key = " + name +
                     " AND j.value = " + value + ")"
               : " AND (s.tags::jsonb ->> " + name + ") = " + value;
  }
  const auto param = [&](Param p) {
    params.push_back(std::move(p));
    return "$" + std::to_string(params.size());
  };
  if (f.until_ms) {
    sql += " AND s.created_at < " + param(*f.until_ms);
  }
  if (f.key_public_id) {
    sql += " AND s.key_public_id = " + param(*f.key_public_id);
  }
  if (f.user_id) {
    sql += " AND s.user_id = " + param(*f.user_id);
  }
  if (f.request_id) {
    sql += " AND s.request_id = " + param(*f.request_id);
  }
  if (f.before) {
    const std::string at = param(f.before->first);
    sql += " AND (s.created_at < " + at + " OR (s.created_at = " + at + " AND s.request_id < " +
           param(f.before->second) + "))";
  }
  sql += f.newest_first ? " ORDER BY s.created_at DESC, s.request_id DESC"
                        : " ORDER BY s.created_at, s.request_id";
  if (f.limit) {
    sql += " LIMIT " + param(*f.limit);
  }
  std::vector<SpendRow> out;
  for (const Row& r : c_->query(sql, params)) {
    out.push_back(spendRow(r));
  }
  return out;
}

std::vector<SpendTotal> BillingStore::summarizeSpend(const std::string& team_id, SpendGroup by,
                                                     const std::string& since_day) {
  const std::string column(groupColumn(by));
  const std::string table = by == SpendGroup::Tag ? "spend_daily_tags"
                            : by == SpendGroup::User
                                ? "spend_daily_users LEFT JOIN users u ON u.id = user_id"
                                : "spend_daily";
  std::vector<SpendTotal> out;
  std::string sums = "SUM(requests), SUM(prompt_tokens), SUM(completion_tokens), SUM(cost)";
  for (const auto& [kind, field] : kTokenKinds) {
    sums += ", SUM(" + std::string(kind) + ")";
  }
  constexpr std::size_t kTotalColumns = 5;  // The group and four sums before the kinds.
  for (const Row& r :
       c_->query("SELECT " + column + ", " + sums + " FROM " + table +
                     " WHERE team_id = $1 AND day >= $2 GROUP BY " + column + " ORDER BY " + column,
                 {team_id, since_day})) {
    out.push_back({r.text(0), r.integer(1), r.integer(2), r.integer(3), r.integer(4),
                   readKinds(r, kTotalColumns)});
  }
  return out;
}

}  // namespace tollgate::store
