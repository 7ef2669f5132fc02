#include "core/unicode.hpp"

#include <gtest/gtest.h>

namespace tollgate::unicode {
namespace {

TEST(UnicodeTest, NfcComposesAndLeavesComposedTextAlone) {
  EXPECT_EQ(nfc("cafe\u0301"), "caf\u00e9");
  EXPECT_EQ(nfc("caf\u00e9"), "caf\u00e9");
  EXPECT_EQ(nfc("plain"), "plain");
  EXPECT_EQ(nfc(""), "");
}

TEST(UnicodeTest, FindsFormatPrivateUseAndUnassignedCharacters) {
  EXPECT_EQ(firstHidden("evil\u202Etxt.exe"), U'\u202E');
  EXPECT_EQ(firstHidden("zero\u200Bwidth"), U'\u200B');
  EXPECT_EQ(firstHidden("joiner\u200D"), U'\u200D');
  EXPECT_EQ(firstHidden("\uFEFFbom"), U'\uFEFF');
  EXPECT_EQ(firstHidden("private\uE000"), U'\uE000');
  EXPECT_EQ(firstHidden("tag\U000E0041"), U'\U000E0041');
  EXPECT_EQ(firstHidden("unassigned\u0378"), U'\u0378');
  EXPECT_EQ(firstHidden("caf\u00e9 \u0434\u043e\u043c \u6771\u4eac \U0001F600"), std::nullopt);
}

TEST(UnicodeTest, LookAlikesShareASkeletonAndOthersDoNot) {
  EXPECT_EQ(skeleton("d\u0435fault"), skeleton("default"));  // Cyrillic е
  EXPECT_EQ(skeleton("paypa1"), skeleton("paypal"));
  EXPECT_EQ(skeleton("\u0440\u0430\u0443\u0440\u0430l"), skeleton("paypal"));
  EXPECT_NE(skeleton("default"), skeleton("defaults"));
  EXPECT_NE(skeleton("team-a"), skeleton("team-b"));
}

TEST(UnicodeTest, VisibleEscapesWhatDoesNotShowAsItself) {
  EXPECT_EQ(visible("evil\u202Etxt"), "evil\\u202Etxt");
  EXPECT_EQ(visible("a\u200Bb\tc"), "a\\u200Bb\\u0009c");
  EXPECT_EQ(visible("tag\U000E0041"), "tag\\U000E0041");
  EXPECT_EQ(visible("caf\u00e9 \u6771\u4eac"), "caf\u00e9 \u6771\u4eac");
  EXPECT_EQ(visible("back\\slash"), "back\\\\slash");
  EXPECT_EQ(visible("bad\xff\xc3"), "bad\\xff\\xc3");
  EXPECT_EQ(visible("\u0085"), "\\u0085");
  EXPECT_EQ(visible("abcdef", 3), "abc\u2026");
  EXPECT_EQ(codePointName(U'\u202E'), "U+202E");
  EXPECT_EQ(codePointName(U'\U000E0041'), "U+E0041");
}

TEST(UnicodeTest, HostNamesInAscii) {
  EXPECT_EQ(hostToAscii("Gateway.Example.COM"), "gateway.example.com");
  EXPECT_EQ(hostToAscii("b\u00fccher.example"), "xn--bcher-kva.example");
  EXPECT_EQ(hostToAscii("xn--bcher-kva.example"), "xn--bcher-kva.example");
  EXPECT_EQ(hostToAscii("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(hostToAscii("bad_host.example"), std::nullopt);
  EXPECT_EQ(hostToAscii("a..b"), std::nullopt);
  EXPECT_EQ(hostToAscii(""), std::nullopt);
}

}  // namespace
}  // namespace tollgate::unicode
