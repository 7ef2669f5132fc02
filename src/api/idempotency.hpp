// Idempotency-Key (the IETF httpapi draft, Stripe's semantics): a request that carries one is
// answered and billed once within the window. Its key is claimed for the team before anything is
// held or sent upstream (so duplicates on two gateways are caught), completed with the answer in
// the charge's transaction, and released when the attempt is not charged a complete answer (so a
// retry after a 429 or a 5xx gets a fresh try). A retry of a completed request gets its first
// answer's bytes again; the same key with another request is 422; a retry while the first still
// runs is 409 with Retry-After.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "exchange/request_context.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"
#include "store/store_work.hpp"

namespace tollgate::api {

/// The request's Idempotency-Key: none (no header, or an empty one), or the key (at most 255
/// printable ASCII characters), or the error for one that is not.
Result<std::optional<std::string>> idempotencyKey(const http::Request& req);

/// A key claimed for one attempt.
struct Claim {
  std::string team_id;
  std::string key;
  std::string claim_id;
};

/// Who claims, and for how long a key's record holds.
struct ClaimScope {
  std::string team_id;
  std::string gateway_id;
  std::int64_t window_ms = 0;
  std::int64_t lease_ms = 0;  ///< Longer than the request may run (see IdempotencyClaim).
};

/// Claims `key` for the request whose digest is `digest`. The claim, when the request is to go
/// on; otherwise nullopt, the client answered: the first answer again, or why not.
boost::asio::awaitable<std::optional<Claim>> claimOrAnswer(
    store::StoreWork& work, exchange::RequestContext& ctx, const ClaimScope& scope,
    const std::string& key, const std::string& digest, http::ResponseWriter& out);

/// Forgets `claim` (its attempt was not charged a complete answer) before the client hears of
/// it, so that its retry is a fresh try.
boost::asio::awaitable<void> release(store::StoreWork& work, const Claim& claim);

}  // namespace tollgate::api
