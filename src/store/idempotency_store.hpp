// The store's Idempotency-Key records: a claim per attempt at a request, completed with the
// answer its client was sent (by a settlement: billing_store.hpp) or released.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/connection.hpp"

namespace tollgate::store {

/// An answer kept for an Idempotency-Key: what its client was sent.
struct KeptAnswer {
  std::int64_t status = 0;
  std::string content_type;
  bool streamed = false;
  std::string body;  ///< The bytes sent (a stream's whole event stream).
};

/// A claim of an Idempotency-Key for one attempt at a request.
struct IdempotencyClaim {
  std::string team_id;
  std::string key;         ///< The header's value.
  std::string digest;      ///< Of the decoded request.
  std::string claim_id;    ///< This attempt's id.
  std::string gateway_id;  ///< The gateway running the attempt.
  std::int64_t now = 0;
  std::int64_t window_ms = 0;  ///< A record older than this is forgotten: the key is new again.
  /// A running claim whose gateway was not seen within this (by the gateways table's seen_at, on
  /// the store's clock; or that is not registered at all) is taken over.
  std::int64_t alive_window_ms = 0;
  /// A running claim older than this is taken over even from a live gateway: no attempt runs
  /// that long, so its release was lost. 0: never.
  std::int64_t lease_ms = 0;
};

enum class ClaimOutcome {
  Claimed,    ///< New (or taken over from an expired record or a dead gateway's claim): go on.
  Running,    ///< Another attempt with the same digest holds it and its gateway is alive.
  Mismatch,   ///< The key was used for a different request (digest differs), running or completed,
              ///< within the window.
  Completed,  ///< Answered and charged: `answer` is what was sent.
  CompletedNotKept,    ///< Answered and charged, but its answer was not kept (a ZDR or TEE model).
  CompletedOverBound,  ///< Answered and charged, but its answer was not kept: the team's kept
                       ///< answers were at their bound.
};

struct ClaimReply {
  ClaimOutcome outcome = ClaimOutcome::Claimed;
  std::optional<KeptAnswer> answer;  ///< Completed only.
  std::string request_id;            ///< Completed*: the charged request's id.
};

/// Idempotency-Key records, in the caller's transaction.
class IdempotencyStore {
 public:
  /// idempotency_keys.kept of an answer not kept because its team's kept answers were at their
  /// bound (1: kept; 0: not kept, its model retaining no data).
  static constexpr std::int64_t kKeptOverBound = 2;

  explicit IdempotencyStore(Connection& c) : c_(&c) {}

  /// Claims `c.key` for `c.team_id`, in the caller's transaction: an expired record forgotten,
  /// then one upsert that inserts the claim or takes the record over (the same digest's running
  /// claim of a dead gateway), then a read when it did neither. On PostgreSQL the upsert locks
  /// the record until the transaction ends: of gateways claiming at once, exactly one gets
  /// Claimed.
  ClaimReply claimIdempotencyKey(const IdempotencyClaim& c);
  /// Forgets a running claim (the attempt failed or was not charged): only if it is still
  /// `claim_id`'s and running.
  void releaseIdempotencyKey(const std::string& team_id, const std::string& key,
                             const std::string& claim_id);
  /// Forgets records created before `before_ms` (and the bytes of their teams' kept answers
  /// they took); how many.
  std::int64_t pruneIdempotencyKeys(std::int64_t before_ms);

 private:
  Connection* c_;
};

}  // namespace tollgate::store
