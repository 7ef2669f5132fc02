#include "alerts/alert_event.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>

#include "core/json.hpp"
#include "core/money.hpp"
#include "core/text.hpp"

namespace tollgate::alerts {

std::string eventBody(const store::AlertRow& event) {
  json::Writer w;
  w.startObject();
  writeEventFields(w, event);
  w.endObject();
  return w.take();
}

void writeEventFields(json::Writer& w, const store::AlertRow& event) {
  w.field("id", event.id);
  w.field("type", event.type);
  w.field("created_at", text::utcTimestamp(event.created_at));
  w.field("team", event.team);
  if (event.key) {
    // A key's budget: the fraction crossed, what the key spent in the window, and its budget.
    w.field("key", *event.key);
    w.key("threshold");
    w.rawNumber(fractionText(event.threshold));
    w.key("spend_usd");
    w.rawNumber(money::formatUsd(event.balance));
    w.key("budget_usd");
    w.rawNumber(money::formatUsd(event.budget.value_or(0)));
  } else {
    w.key("threshold");
    w.rawNumber(money::formatUsd(event.threshold));
    w.key("balance_usd");
    w.rawNumber(money::formatUsd(event.balance));
  }
}

std::string fractionText(std::int64_t ppm) {
  // Parts per million are pico-units of a millionth: the money formatter writes them exactly.
  constexpr std::int64_t kPicoPerPpm = 1'000'000;
  return money::formatUsd(ppm * kPicoPerPpm);
}

std::string signature(std::string_view secret, std::int64_t unix_seconds, std::string_view body) {
  const std::string t = std::to_string(unix_seconds);
  std::string signed_text;
  signed_text.reserve(t.size() + 1 + body.size());
  signed_text.append(t).append(".").append(body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(signed_text.data()), signed_text.size(), mac.data(),
       &length);
  return "t=" + t + ",v1=" + text::hex({mac.data(), length});
}

std::chrono::seconds retryDelay(std::int64_t attempts) {
  // 2^12 s is past the cap already: no shift is ever wider than that.
  constexpr std::int64_t kMaxShift = 12;
  const std::int64_t shift = std::clamp<std::int64_t>(attempts - 1, 0, kMaxShift);
  return std::min(kFirstRetryDelay * (std::int64_t{1} << shift), kMaxRetryDelay);
}

std::optional<std::int64_t> nextAttempt(std::int64_t created_ms, std::int64_t now_ms,
                                        std::int64_t attempts) {
  const std::int64_t at =
      now_ms + std::chrono::duration_cast<std::chrono::milliseconds>(retryDelay(attempts)).count();
  const std::int64_t give_up =
      created_ms + std::chrono::duration_cast<std::chrono::milliseconds>(kGiveUpAfter).count();
  if (at > give_up) {
    return std::nullopt;
  }
  return at;
}

}  // namespace tollgate::alerts
