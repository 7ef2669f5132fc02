// The store's SQL for Idempotency-Key records. A kept answer's body is stored as base64
// (connection.hpp: decodedBody).
#include "store/idempotency_store.hpp"

#include <map>

namespace tollgate::store {
namespace {

/// Subtracts from a team's sum the bytes of its kept answers that `forgotten` records took (rows
/// of team id and bytes).
void forgetBytes(Connection& c, const Rows& forgotten) {
  std::map<std::string, std::int64_t> by_team;  // In key order, as settlements lock them.
  for (const Row& r : forgotten) {
    if (r.integer(1) > 0) {
      by_team[r.text(0)] += r.integer(1);
    }
  }
  std::vector<Statement> updates;
  for (const auto& [team_id, bytes] : by_team) {
    updates.push_back(
        {"UPDATE idempotency_bytes SET bytes = bytes - $1 WHERE team_id = $2", {bytes, team_id}});
  }
  if (!updates.empty()) {
    c.pipeline(updates);
  }
}

}  // namespace

ClaimReply IdempotencyStore::claimIdempotencyKey(const IdempotencyClaim& c) {
  // An expired record is forgotten, its bytes with it: the deletion locks it on PostgreSQL, so
  // of attempts at once only one subtracts them. Then the claim is made, or the record taken
  // over when it is the same request's running claim of a gateway not seen within the alive
  // window. A conflict locks the record on PostgreSQL, the WHERE then judging its newest
  // version: of attempts at once, one takes it and the others find it running.
  const std::array<Statement, 2> statements{
      Statement{"DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND created_at < $3 "
                "RETURNING team_id, bytes",
                {c.team_id, c.key, c.now - c.window_ms}},
      Statement{
          "INSERT INTO idempotency_keys (team_id, key, digest, claim_id, gateway_id, state, "
          "created_at) VALUES ($1, $2, $3, $4, $5, 'running', $6) ON CONFLICT (team_id, key) DO "
          "UPDATE SET digest = excluded.digest, claim_id = excluded.claim_id, gateway_id = "
          "excluded.gateway_id, state = 'running', created_at = excluded.created_at WHERE "
          "idempotency_keys.state = 'running' AND idempotency_keys.digest = excluded.digest AND "
          "(idempotency_keys.created_at < $8 OR NOT EXISTS (SELECT 1 FROM gateways g WHERE g.id "
          "= idempotency_keys.gateway_id AND g.seen_at >= " +
              std::string(c_->nowMsSql()) + " - $7)) RETURNING 1",
          {c.team_id, c.key, c.digest, c.claim_id, c.gateway_id, c.now, c.alive_window_ms,
           c.lease_ms > 0 ? c.now - c.lease_ms : std::int64_t{0}}}};
  const std::vector<Rows> done = c_->pipeline(statements);
  forgetBytes(*c_, done[0]);
  if (!done[1].empty()) {
    return {};
  }
  // Neither new nor taken over: the record, live and locked, answers.
  const Rows rows = c_->query(
      "SELECT digest, state, request_id, kept, status, content_type, streamed, body FROM "
      "idempotency_keys WHERE team_id = $1 AND key = $2",
      {c.team_id, c.key});
  if (rows.empty()) {
    throw StoreError(StoreError::Kind::Other, "an idempotency key's record vanished while locked");
  }
  const Row& r = rows.front();
  if (r.text(0) != c.digest) {
    return {ClaimOutcome::Mismatch, std::nullopt, ""};
  }
  if (r.text(1) != "completed") {
    return {ClaimOutcome::Running, std::nullopt, ""};
  }
  if (r.integer(3) != 1) {
    const bool over_bound = r.integer(3) == kKeptOverBound;
    return {over_bound ? ClaimOutcome::CompletedOverBound : ClaimOutcome::CompletedNotKept,
            std::nullopt, r.text(2)};
  }
  return {ClaimOutcome::Completed,
          KeptAnswer{r.integer(4), r.text(5), r.integer(6) != 0,
                     decodedBody(r.text(7), "idempotency_keys")},
          r.text(2)};
}

void IdempotencyStore::releaseIdempotencyKey(const std::string& team_id, const std::string& key,
                                             const std::string& claim_id) {
  c_->query(
      "DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND claim_id = $3 AND state = "
      "'running'",
      {team_id, key, claim_id});
}

std::int64_t IdempotencyStore::pruneIdempotencyKeys(std::int64_t before_ms) {
  const Rows forgotten = c_->query(
      "DELETE FROM idempotency_keys WHERE created_at < $1 RETURNING team_id, bytes", {before_ms});
  forgetBytes(*c_, forgotten);
  return static_cast<std::int64_t>(forgotten.size());
}

}  // namespace tollgate::store
