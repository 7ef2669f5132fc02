// An alert's body, its signature and the delivery's backoff, without I/O.
#include "alerts/alert_event.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace tollgate::alerts {
namespace {

constexpr std::int64_t kSecondMs = 1000;
constexpr std::int64_t kHourMs = 3600 * kSecondMs;

store::AlertRow event() {
  store::AlertRow e;
  e.id = "0190b6a4-0000-7000-8000-000000000001";
  e.team = "acme \"search\"";
  e.type = "balance.below";
  e.threshold = 10'000'000'000'000;  // 10 USD
  e.balance = 9'990'000'000'000;     // 9.99 USD
  e.created_at = 1'764'000'000'123;
  return e;
}

TEST(AlertEventTest, BodyHasTheEventsFieldsWithExactAmounts) {
  const std::string body = eventBody(event());
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  ASSERT_FALSE(d.HasParseError()) << body;
  EXPECT_STREQ(d["id"].GetString(), "0190b6a4-0000-7000-8000-000000000001");
  EXPECT_STREQ(d["type"].GetString(), "balance.below");
  EXPECT_STREQ(d["created_at"].GetString(), "2025-11-24T16:00:00Z");
  EXPECT_STREQ(d["team"].GetString(), "acme \"search\"");
  EXPECT_EQ(d.MemberCount(), 6u);
  // Amounts as written, never through a float's text.
  EXPECT_NE(body.find("\"threshold\":10,"), std::string::npos) << body;
  EXPECT_NE(body.find("\"balance_usd\":9.99}"), std::string::npos) << body;
}

TEST(AlertEventTest, BodyIsTheSameOnEveryAttempt) {
  store::AlertRow retried = event();
  retried.attempts = 3;
  retried.due_at = 99;
  EXPECT_EQ(eventBody(event()), eventBody(retried));
}

TEST(AlertEventTest, SignatureIsHmacSha256OfTimeDotBody) {
  // Python: hmac.new(b"whsec_0123456789abcdef", b'1700000000.{"id":"e1"}', "sha256").hexdigest()
  EXPECT_EQ(signature("whsec_0123456789abcdef", 1'700'000'000, R"({"id":"e1"})"),
            "t=1700000000,v1=1d0aa489f3bec83604c4c19ad75263ddc9ca64959e07123cbb586b3bce5c3045");
}

TEST(AlertEventTest, SignatureChangesWithTheTimeTheBodyAndTheSecret) {
  const std::string base = signature("whsec_0123456789abcdef", 1'700'000'000, "{}");
  const auto mac = [](const std::string& s) { return s.substr(s.find(",v1=")); };
  EXPECT_NE(mac(base), mac(signature("whsec_0123456789abcdef", 1'700'000'001, "{}")));
  EXPECT_NE(mac(base), mac(signature("whsec_0123456789abcdef", 1'700'000'000, "{ }")));
  EXPECT_NE(mac(base), mac(signature("whsec_0123456789abcdeF", 1'700'000'000, "{}")));
}

TEST(AlertEventTest, RetriesBackOffFromOneSecondDoublingToAnHour) {
  EXPECT_EQ(retryDelay(1), std::chrono::seconds(1));
  EXPECT_EQ(retryDelay(2), std::chrono::seconds(2));
  EXPECT_EQ(retryDelay(3), std::chrono::seconds(4));
  EXPECT_EQ(retryDelay(12), std::chrono::seconds(2048));
  EXPECT_EQ(retryDelay(13), std::chrono::seconds(3600));
  EXPECT_EQ(retryDelay(1000), std::chrono::seconds(3600));
  EXPECT_EQ(retryDelay(0), std::chrono::seconds(1)) << "never less than the first delay";
}

TEST(AlertEventTest, AnEventIsGivenUpADayAfterItWasWritten) {
  const std::int64_t created = 1'000'000;
  EXPECT_EQ(nextAttempt(created, created + 5, 1), created + 5 + kSecondMs);
  EXPECT_EQ(nextAttempt(created, created + 20 * kHourMs, 20), created + 21 * kHourMs);
  EXPECT_EQ(nextAttempt(created, created + 23 * kHourMs, 20), created + 24 * kHourMs)
      << "the last try may be at the 24 hours";
  EXPECT_EQ(nextAttempt(created, created + 23 * kHourMs + 1, 20), std::nullopt);
}

}  // namespace
}  // namespace tollgate::alerts
