// The console's HTTP pieces that parse what a client sends: one cookie out of a Cookie header,
// and one field out of form-urlencoded text (a query string or a form's body).
#include <gtest/gtest.h>

#include "http/cookies.hpp"
#include "http/form.hpp"

namespace tollgate::http {
namespace {

TEST(CookiesTest, FindsTheCookieOfThatNameAmongOthers) {
  EXPECT_EQ(cookieValue("a=1; tollgate_session=abc; b=2", "tollgate_session"), "abc");
  EXPECT_EQ(cookieValue(" x = \"quoted\" ", "x"), "quoted");
  EXPECT_EQ(cookieValue("empty=", "empty"), "");
}

TEST(CookiesTest, NamesMatchExactlyAndBrokenPairsAreSkipped) {
  EXPECT_FALSE(cookieValue("", "s"));
  EXPECT_FALSE(cookieValue("ss=1; S=2; xs=3", "s"));
  EXPECT_EQ(cookieValue("novalue; ;; s=ok", "s"), "ok");
  std::string many;
  for (int i = 0; i < 100; ++i) {
    many += "c" + std::to_string(i) + "=v; ";
  }
  many += "late=1";
  EXPECT_EQ(cookieValue(many, "late"), "1") << "every pair is read";
}

TEST(CookiesTest, ACookieNamedTwiceIsNoneOfThem) {
  // A sibling host may plant a second session cookie; which one the browser sends first is not
  // the server's to choose.
  EXPECT_FALSE(cookieValue("tollgate_session=one;tollgate_session=two", "tollgate_session"));
  EXPECT_FALSE(cookieValue("s=same; a=1; s=same", "s"));
  std::string many = "s=planted; ";
  for (int i = 0; i < 100; ++i) {
    many += "c" + std::to_string(i) + "=v; ";
  }
  many += "s=mine";
  EXPECT_FALSE(cookieValue(many, "s")) << "a second cookie far down the header still counts";
}

TEST(CookiesTest, ASessionCookieIsHttpOnlyLaxAndSecureOnlyWhenAsked) {
  EXPECT_EQ(setCookie("s", "v", false, 60), "s=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax");
  EXPECT_EQ(setCookie("__Host-s", "v", true, 0),
            "__Host-s=v; Path=/; Max-Age=0; HttpOnly; SameSite=Lax; Secure");
}

TEST(FormTest, DecodesTheFirstValueOfAField) {
  EXPECT_EQ(*formValue("a=1&token=ll-x&token=other", "token"), std::optional<std::string>("ll-x"));
  EXPECT_EQ(*formValue("q=a+b%20c%2B", "q"), std::optional<std::string>("a b c+"));
  EXPECT_EQ(*formValue("flag&x=1", "flag"), std::optional<std::string>(""));
  EXPECT_EQ(*formValue("a%5Fb=1", "a_b"), std::optional<std::string>("1"));
  EXPECT_EQ(*formValue("", "a"), std::nullopt);
  EXPECT_EQ(*formValue("ab=1", "a"), std::nullopt);
}

TEST(FormTest, ABrokenEncodingIsRefusedNamingTheField) {
  const auto r = formValue("since=%zz", "since");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::InvalidValue);
  EXPECT_EQ(r.error().param, "since");
  EXPECT_TRUE(formValue("other=%zz&since=1", "since")) << "only the field asked for is decoded";
}

}  // namespace
}  // namespace tollgate::http
