#include "core/base64.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tollgate::base64 {
namespace {

struct Vector {
  std::string bytes;
  std::string text;
};

// RFC 4648 §10.
const Vector kRfc4648[] = {{"", ""},
                           {"f", "Zg=="},
                           {"fo", "Zm8="},
                           {"foo", "Zm9v"},
                           {"foob", "Zm9vYg=="},
                           {"fooba", "Zm9vYmE="},
                           {"foobar", "Zm9vYmFy"}};

TEST(Base64, EncodesTheRfc4648Vectors) {
  for (const Vector& v : kRfc4648) {
    EXPECT_EQ(encode(v.bytes), v.text) << v.bytes;
  }
}

TEST(Base64, DecodesTheRfc4648Vectors) {
  for (const Vector& v : kRfc4648) {
    EXPECT_EQ(decode(v.text), v.bytes) << v.text;
  }
}

TEST(Base64, EveryByteValueRoundTrips) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) {
    bytes += static_cast<char>(b);
  }
  const std::string text = encode(bytes);
  EXPECT_EQ(
      text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="),
      std::string::npos);
  EXPECT_EQ(decode(text), bytes);
  EXPECT_EQ(encode("\xfb\xff"), "+/8=");
}

TEST(Base64, RefusesWhatIsNotPaddedStandardBase64) {
  for (const char* text : {
           "Zg",        // unpadded
           "Zg=",       // short padding
           "Zm9",       // not a multiple of 4
           "Zm9vY",     // not a multiple of 4
           "Zg==Zg==",  // padding before the end
           "Z===",      // three padding characters
           "====",      // padding only
           "Z=g=",      // padding inside a group
           "Zm9v\n",    // a line break
           "Zm 9",      // a space
           "-_8=",      // URL-safe alphabet
           "Zm9*",      // not in the alphabet
       }) {
    EXPECT_FALSE(decode(text).has_value()) << text;
  }
}

TEST(Base64Url, EncodesWithoutPaddingAndDecodesBack) {
  for (const Vector& v : kRfc4648) {
    std::string unpadded = v.text;
    unpadded.erase(unpadded.find_last_not_of('=') + 1);
    EXPECT_EQ(encodeUrl(v.bytes), unpadded) << v.bytes;
    EXPECT_EQ(decodeUrl(unpadded), v.bytes) << unpadded;
  }
  EXPECT_EQ(encodeUrl("\xfb\xff"), "-_8");
  EXPECT_EQ(decodeUrl("-_8"), "\xfb\xff");
}

TEST(Base64Url, EveryByteValueRoundTrips) {
  std::string bytes;
  for (int b = 0; b < 256; ++b) {
    bytes += static_cast<char>(b);
    EXPECT_EQ(decodeUrl(encodeUrl(bytes)), bytes) << b;
  }
}

TEST(Base64Url, RefusesAnythingButTheCanonicalUnpaddedSpelling) {
  for (const char* text : {
           "Zg==",    // padded
           "Zm8=",    // padded
           "Z",       // a length of 4n+1
           "Zm9vY",   // a length of 4n+1
           "+/8",     // the standard alphabet
           "Zh",      // unused bits set ("Zg" is canonical)
           "Zm9",     // unused bits set ("Zm8" is canonical)
           "Zm 9",    // a space
           "Zm9v\n",  // a line break
       }) {
    EXPECT_FALSE(decodeUrl(text).has_value()) << text;
  }
  EXPECT_EQ(decodeUrl(""), "");
}

}  // namespace
}  // namespace tollgate::base64
