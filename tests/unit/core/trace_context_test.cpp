#include "core/trace_context.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/text.hpp"

namespace tollgate::trace {
namespace {

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContextTest, ValidTraceparentIsRead) {
  const auto p = parseTraceparent(kValid);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(text::hex(p->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(text::hex(p->span_id), "00f067aa0ba902b7");
  EXPECT_EQ(p->flags, 0x01);
  const auto unsampled =
      parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(unsampled.has_value());
  EXPECT_EQ(unsampled->flags, 0x00);
  // Flags the spec has not defined yet are carried, not refused.
  EXPECT_EQ(parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff")->flags,
            0xff);
}

TEST(TraceContextTest, LaterVersionsAreReadByVersionZerosFields) {
  EXPECT_TRUE(parseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
  EXPECT_TRUE(
      parseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-follows"));
  EXPECT_FALSE(
      parseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01what-follows"));
}

TEST(TraceContextTest, EachMalformedTraceparentIsRefused) {
  const std::string_view malformed[] = {
      "",
      "00",
      // Version ff is invalid; version 00 has exactly 55 characters.
      "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-010",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
      // Upper-case hex, anywhere.
      "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01",
      "0A-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0A",
      // Ids of zeros.
      "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
      // Not hex, wrong separators, ids of the wrong length.
      "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x",
      "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7_01",
      "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
      "00-4bf92f3577b34da6a3ce929d0e0e47366-0f067aa0ba902b7-01",
      " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
  };
  for (const std::string_view value : malformed) {
    EXPECT_FALSE(parseTraceparent(value).has_value()) << value;
  }
}

TEST(TraceContextTest, TracestateIsCheckedByTheSpecsGrammar) {
  EXPECT_TRUE(validTracestate(""));
  EXPECT_TRUE(validTracestate("congo=t61rcWkgMzE"));
  EXPECT_TRUE(validTracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
  EXPECT_TRUE(validTracestate("rojo=00f067aa0ba902b7 , , congo=t61rcWkgMzE"));
  EXPECT_TRUE(validTracestate("1tenant@vendor=value, a_b-c*d/e=x y"));
  EXPECT_FALSE(validTracestate("Rojo=1"));                    // upper-case key
  EXPECT_FALSE(validTracestate("rojo"));                      // no value
  EXPECT_FALSE(validTracestate("rojo="));                     // empty value
  EXPECT_FALSE(validTracestate("rojo=a=b"));                  // '=' in the value
  EXPECT_FALSE(validTracestate("rojo=bad\x01value"));         // control character
  EXPECT_FALSE(validTracestate("1rojo=x"));                   // simple keys begin with a letter
  EXPECT_FALSE(validTracestate("tenant@Vendor=x"));           // upper-case system
  EXPECT_FALSE(validTracestate("tenant@vendor123456789=x"));  // system of 15 characters
  std::string many;
  for (int i = 0; i < 33; ++i) {
    many += "k" + std::to_string(i) + "=v,";
  }
  EXPECT_FALSE(validTracestate(many));  // 33 members
  EXPECT_FALSE(validTracestate("k=" + std::string(kMaxTracestateBytes, 'v')));
}

TEST(TraceContextTest, AValidParentIsContinuedWithItsFlagAndState) {
  const Context c = begin(kValid, "congo=t61rcWkgMzE", 0.0);
  EXPECT_EQ(text::hex(c.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  ASSERT_TRUE(c.parent.has_value());
  EXPECT_EQ(text::hex(*c.parent), "00f067aa0ba902b7");
  EXPECT_NE(c.span_id, *c.parent);
  EXPECT_TRUE(c.sampled);  // The caller's flag, whatever the ratio.
  EXPECT_EQ(c.tracestate, "congo=t61rcWkgMzE");
  const Context unsampled =
      begin("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "bad state", 1.0);
  EXPECT_FALSE(unsampled.sampled);
  EXPECT_EQ(unsampled.tracestate, "");
}

TEST(TraceContextTest, AMalformedParentStartsANewTraceSampledAtTheRatio) {
  const Context c =
      begin("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "congo=t61rcWkgMzE", 1.0);
  EXPECT_NE(text::hex(c.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_NE(text::hex(c.trace_id), std::string(32, '0'));
  EXPECT_FALSE(c.parent.has_value());
  EXPECT_TRUE(c.sampled);
  EXPECT_EQ(c.tracestate, "");  // Without its parent, a caller's state means nothing.
  EXPECT_FALSE(begin("", "", 0.0).sampled);
  int sampled = 0;
  std::set<TraceId> ids;
  for (int i = 0; i < 1000; ++i) {
    const Context n = begin("", "", 0.5);
    sampled += n.sampled ? 1 : 0;
    ids.insert(n.trace_id);
  }
  EXPECT_GT(sampled, 350);
  EXPECT_LT(sampled, 650);
  EXPECT_EQ(ids.size(), 1000U);
}

TEST(TraceContextTest, TraceparentIsWrittenFromASpan) {
  const Context c = begin(kValid, "", 1.0);
  const SpanId span = newSpanId();
  const std::string written = traceparent(c, span);
  EXPECT_EQ(written, "00-4bf92f3577b34da6a3ce929d0e0e4736-" + text::hex(span) + "-01");
  const auto read = parseTraceparent(written);
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->span_id, span);
  EXPECT_EQ(traceparent(begin("", "", 0.0), span).substr(53), "00");
}

}  // namespace
}  // namespace tollgate::trace
