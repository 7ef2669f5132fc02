// The claim stage: Idempotency-Key (the IETF httpapi draft, Stripe's semantics). A request that
// carries one is answered and billed once within the window. Its key is claimed for the team
// before anything is held or sent upstream (so duplicates on two gateways are caught), completed
// with the answer in the charge's transaction, and released when the attempt is not charged a
// complete answer (so a retry after a 429 or a 5xx gets a fresh try). A retry of a completed
// request gets its first answer's bytes again; the same key with another request is 422; a retry
// while the first still runs is 409 with Retry-After.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <optional>
#include <string>

#include "billing/charge.hpp"
#include "core/result.hpp"
#include "exchange/request_context.hpp"
#include "exchange/transcript.hpp"
#include "http/request.hpp"
#include "http/writer.hpp"
#include "store/store_work.hpp"

namespace tollgate::flow {

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

/// A claim held for its attempt, as a hold is by its Charge: the settlement it is handed to
/// completes it (or releases it) in its transaction; otherwise release() forgets it before the
/// client hears of an end that charged nothing, and a guard dropped without either releases it
/// with the writer's next idle work.
class ClaimGuard {
 public:
  ClaimGuard(store::StoreWork& work, Claim claim) : work_(&work), claim_(std::move(claim)) {}
  ClaimGuard(ClaimGuard&& other) noexcept;
  ClaimGuard& operator=(ClaimGuard&&) = delete;
  ClaimGuard(const ClaimGuard&) = delete;
  ClaimGuard& operator=(const ClaimGuard&) = delete;
  ~ClaimGuard();

  /// Hands the claim to `charge`, whose settlement of a complete answer completes it with `sent`
  /// (only the charge when `keep_answer` is false) and whose other settlements release it.
  void settleWith(billing::Charge& charge, const exchange::Transcript& sent, bool keep_answer);
  /// Forgets the claim now, unless a committed settlement already completed or released it.
  boost::asio::awaitable<void> release();

 private:
  store::StoreWork* work_;
  Claim claim_;
  const billing::Charge* charge_ = nullptr;  ///< The settlement it was handed to, if any.
  bool done_ = false;                        ///< Released, or moved from.
};

/// Claims `key` for the request whose digest is `digest`. The claim, when the request is to go
/// on; otherwise nullopt, the client answered: the first answer again, or why not.
boost::asio::awaitable<std::optional<ClaimGuard>> claimOrAnswer(
    store::StoreWork& work, exchange::RequestContext& ctx, const ClaimScope& scope,
    const std::string& key, const std::string& digest, http::ResponseWriter& out);

}  // namespace tollgate::flow
