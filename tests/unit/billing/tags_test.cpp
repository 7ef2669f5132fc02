#include "billing/tags.hpp"

#include <gtest/gtest.h>

namespace tollgate::billing {
namespace {

TEST(SpendTags, PassedThroughVerbatim) {
  const Tags tags = spendTags({{"feature", "search"}, {"Team Name", "a'b; DROP"}}, "curl/8");
  ASSERT_EQ(tags.size(), 2U);
  EXPECT_EQ(tags[0], (std::pair<std::string, std::string>{"feature", "search"}));
  EXPECT_EQ(tags[1], (std::pair<std::string, std::string>{"Team Name", "a'b; DROP"}));
}

TEST(SpendTags, SourcePlaygroundBecomesThePlaygroundTag) {
  const Tags tags = spendTags({{"source", "playground"}, {"feature", "x"}}, "");
  ASSERT_EQ(tags.size(), 2U);
  EXPECT_EQ(tags[0], (std::pair<std::string, std::string>{"playground", "true"}));
  EXPECT_EQ(spendTags({{"source", "cli"}}, "")[0],
            (std::pair<std::string, std::string>{"source", "cli"}));
}

TEST(SpendTags, UserAgentWhenNoTags) {
  EXPECT_EQ(spendTags({}, "OpenAI/JS 4.0"), (Tags{{"user_agent", "OpenAI/JS 4.0"}}));
  EXPECT_TRUE(spendTags({}, "").empty());
}

TEST(SpendTags, UserAgentCappedAndCleaned) {
  const std::string long_ua(1000, 'a');
  EXPECT_EQ(spendTags({}, long_ua)[0].second.size(), kMaxUserAgentTagBytes);
  EXPECT_EQ(spendTags({},
                      "a\r\nb\x01\xff"
                      "c")[0]
                .second,
            "abc");
  EXPECT_TRUE(spendTags({}, "\x01\x02").empty());
}

TEST(TagsJson, AnObjectOfStrings) {
  EXPECT_EQ(tagsJson({}), "{}");
  EXPECT_EQ(tagsJson({{"a", "b\"c"}}), R"({"a":"b\"c"})");
  EXPECT_EQ(tagsJson({{"a", "1"}, {"b\n", "\x01"}}), R"({"a":"1","b\n":"\u0001"})");
}

}  // namespace
}  // namespace tollgate::billing
