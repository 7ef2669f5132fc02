#include "api/idempotency.hpp"

#include <memory>

#include "api/request_flow.hpp"
#include "core/ids.hpp"
#include "core/lease.hpp"

namespace tollgate::api {
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
boost::asio::awaitable<void> replay(exchange::RequestContext& ctx, const store::KeptAnswer& kept,
                                    http::ResponseWriter& out) {
  http::Response r = kept.streamed ? http::Response::eventStream() : http::Response();
  r.status = static_cast<int>(kept.status);
  r.content_type = kept.content_type;
  r.header("Idempotent-Replayed", "true");
  r.body = kept.body;
  ctx.status = r.status;
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

boost::asio::awaitable<std::optional<Claim>> claimOrAnswer(
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
      co_return Claim{scope.team_id, key, claim.claim_id};
    case store::ClaimOutcome::Completed:
      if (ctx.fenced()) {
        co_await refuse(ctx, fencedError(), out);
        co_return std::nullopt;
      }
      co_await replay(ctx, *reply->answer, out);
      co_return std::nullopt;
    case store::ClaimOutcome::CompletedNotKept:
      co_await refuse(ctx, notKept(reply->request_id, "its model retains no data"), out);
      co_return std::nullopt;
    case store::ClaimOutcome::CompletedOverBound:
      co_await refuse(
          ctx,
          notKept(reply->request_id, "the team's kept Idempotency-Key answers were at their bound"),
          out);
      co_return std::nullopt;
    case store::ClaimOutcome::Mismatch: {
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
  ctx.error_code = errorSpec(e.kind).code;
  http::Response busy = http::Response::error(e);
  busy.header("Retry-After", std::string(kRetryAfterSeconds));
  co_await out.send(std::move(busy));
  co_return std::nullopt;
}

boost::asio::awaitable<void> release(store::StoreWork& work, const Claim& claim) {
  store::StoreWork::Task task = [&claim](store::Connection& c) {
    store::IdempotencyStore(c).releaseIdempotencyKey(claim.team_id, claim.key, claim.claim_id);
  };
  co_await work.run(std::move(task));  // Failed: the claim stays until its gateway is gone.
}

}  // namespace tollgate::api
