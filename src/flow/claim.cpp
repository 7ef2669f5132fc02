#include "flow/claim.hpp"

#include <memory>
#include <utility>

#include "core/ids.hpp"
#include "core/lease.hpp"
#include "flow/refuse.hpp"

namespace tollgate::flow {
namespace {

constexpr std::size_t kMaxKeyLength = 255;
/// What a 409 asks the client to wait before its retry (the SDKs honour Retry-After).
constexpr std::string_view kRetryAfterSeconds = "1";

Error invalidKey(std::string message) {
  return Error{ErrorKind::InvalidIdempotencyKey, std::move(message), "Idempotency-Key"};
}

/// The 410 to the retry of request `request_id`, whose answer was not kept `why`.
Error notKept(const std::string& request_id, std::string_view why) {
  return Error{ErrorKind::IdempotentAnswerNotKept,
               "a request with this Idempotency-Key was answered and billed once (request " +
                   request_id + "); its answer is not kept, as " + std::string(why) +
                   ", so it cannot be sent again. Send a new Idempotency-Key to ask again",
               "Idempotency-Key"};
}

/// Sends a kept answer again, as it was sent: a stream as a stream.
boost::asio::awaitable<void> replay(const store::KeptAnswer& kept, http::ResponseWriter& out) {
  http::Response r = kept.streamed ? http::Response::eventStream() : http::Response();
  r.status = static_cast<int>(kept.status);
  r.content_type = kept.content_type;
  r.header("Idempotent-Replayed", "true");
  r.body = kept.body;
  co_await out.sendKept(std::move(r), kept.streamed);
}

}  // namespace

Result<std::optional<std::string>> idempotencyKey(const http::Request& req) {
  const std::string_view key = req.header("Idempotency-Key");
  if (key.empty()) {
    return std::optional<std::string>();  // An empty header is no key (as the session takes it).
  }
  if (key.size() > kMaxKeyLength) {
    return invalidKey("the Idempotency-Key header must be at most 255 characters long");
  }
  for (const char c : key) {
    if (c < ' ' || c > '~') {
      return invalidKey("the Idempotency-Key header must be printable ASCII characters");
    }
  }
  return std::optional<std::string>(std::string(key));
}

boost::asio::awaitable<std::optional<ClaimGuard>> claimOrAnswer(
    store::StoreWork& work, exchange::RequestContext& ctx, const ClaimScope& scope,
    const std::string& key, const std::string& digest, http::ResponseWriter& out) {
  const store::IdempotencyClaim claim{scope.team_id,    key,
                                      digest,           ids::uuidV7(),
                                      scope.gateway_id, store::nowMs(),
                                      scope.window_ms,  Lease::kDeadAfter.count(),
                                      scope.lease_ms};
  auto reply = std::make_shared<store::ClaimReply>();
  store::StoreWork::Task task = [reply, &claim](store::Connection& c) {
    *reply = store::IdempotencyStore(c).claimIdempotencyKey(claim);
  };
  if (!co_await work.run(std::move(task))) {
    const Error e{ErrorKind::BillingUnavailable,
                  "the Idempotency-Key could not be recorded (the store cannot be reached); try "
                  "again shortly",
                  ""};
    co_await refuse(ctx, e, out);
    co_return std::nullopt;
  }
  switch (reply->outcome) {
    case store::ClaimOutcome::Claimed:
      ctx.idempotency = exchange::KeyOutcome::Claimed;
      co_return ClaimGuard(work, Claim{scope.team_id, key, claim.claim_id});
    case store::ClaimOutcome::Completed:
      if (ctx.fenced()) {
        co_await refuse(ctx, fencedError(), out);
        co_return std::nullopt;
      }
      ctx.idempotency = exchange::KeyOutcome::Replayed;
      co_await replay(*reply->answer, out);
      co_return std::nullopt;
    case store::ClaimOutcome::CompletedNotKept:
      ctx.idempotency = exchange::KeyOutcome::NotKept;
      co_await refuse(ctx, notKept(reply->request_id, "its model retains no data"), out);
      co_return std::nullopt;
    case store::ClaimOutcome::CompletedOverBound:
      ctx.idempotency = exchange::KeyOutcome::NotKept;
      co_await refuse(
          ctx,
          notKept(reply->request_id, "the team's kept Idempotency-Key answers were at their bound"),
          out);
      co_return std::nullopt;
    case store::ClaimOutcome::Mismatch: {
      ctx.idempotency = exchange::KeyOutcome::Conflict;
      const Error e{ErrorKind::IdempotencyKeyReused,
                    "this Idempotency-Key was used with a different request; a retry must send "
                    "the same request, and a new request a new key",
                    "Idempotency-Key"};
      co_await refuse(ctx, e, out);
      co_return std::nullopt;
    }
    case store::ClaimOutcome::Running:
      break;
  }
  const Error e{ErrorKind::IdempotencyKeyInUse,
                "a request with this Idempotency-Key is still being answered; retry after it ends",
                "Idempotency-Key"};
  ctx.idempotency = exchange::KeyOutcome::Conflict;
  ctx.error_code = errorSpec(e.kind).code;
  http::Response busy = http::Response::error(e);
  busy.header("Retry-After", std::string(kRetryAfterSeconds));
  co_await out.send(std::move(busy));
  co_return std::nullopt;
}

namespace {

store::StoreWork::Task releaseTask(Claim claim) {
  return [claim = std::move(claim)](store::Connection& c) {
    store::IdempotencyStore(c).releaseIdempotencyKey(claim.team_id, claim.key, claim.claim_id);
  };
}

}  // namespace

ClaimGuard::ClaimGuard(ClaimGuard&& other) noexcept
    : work_(other.work_),
      claim_(std::move(other.claim_)),
      charge_(other.charge_),
      done_(std::exchange(other.done_, true)) {}

ClaimGuard::~ClaimGuard() {
  if (!done_ && charge_ == nullptr) {
    work_->post(releaseTask(std::move(claim_)));  // Its attempt ended before it was settled.
  }
}

void ClaimGuard::settleWith(billing::Charge& charge, const exchange::Transcript& sent,
                            bool keep_answer) {
  charge.completeClaim(claim_.key, claim_.claim_id, sent, keep_answer);
  charge_ = &charge;
}

boost::asio::awaitable<void> ClaimGuard::release() {
  if (done_ || (charge_ != nullptr && charge_->claimSettled())) {
    co_return;
  }
  done_ = true;
  // Failed: the claim stays until its gateway is gone.
  co_await work_->run(releaseTask(claim_));
}

}  // namespace tollgate::flow
