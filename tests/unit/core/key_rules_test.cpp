#include "core/key_rules.hpp"

#include <gtest/gtest.h>

namespace tollgate::key_rules {
namespace {

using Names = std::vector<std::string>;

TEST(ModelAllowed, AModelIdAllowsItsPrefixedForms) {
  const Names allowed{"gpt_4o_mini"};
  EXPECT_TRUE(modelAllowed(allowed, "gpt_4o_mini"));
  EXPECT_TRUE(modelAllowed(allowed, "tollgate::model_name::gpt_4o_mini"));
  EXPECT_TRUE(modelAllowed(allowed, "tollgate::embedding_model_name::gpt_4o_mini"));
  EXPECT_FALSE(modelAllowed(allowed, "gpt_4o"));
  EXPECT_FALSE(modelAllowed(allowed, "tollgate::model_name::gpt_4o"));
  EXPECT_FALSE(modelAllowed(allowed, "GPT_4O_MINI"));
  EXPECT_FALSE(modelAllowed(allowed, ""));
}

TEST(ModelAllowed, APrefixedEntryAllowsTheBareId) {
  const Names allowed{"tollgate::embedding_model_name::embed"};
  EXPECT_TRUE(modelAllowed(allowed, "embed"));
  EXPECT_TRUE(modelAllowed(allowed, "tollgate::model_name::embed"));
}

TEST(ModelAllowed, AFunctionOnlyAsItsOwnName) {
  const Names allowed{"tollgate::function_name::triage"};
  EXPECT_TRUE(modelAllowed(allowed, "tollgate::function_name::triage"));
  EXPECT_FALSE(modelAllowed(allowed, "triage"));
  EXPECT_FALSE(modelAllowed(allowed, "tollgate::model_name::triage"));
  EXPECT_FALSE(modelAllowed(allowed, "tollgate::function_name::other"));
  // A model of the same name as a function does not allow the function, nor the reverse.
  EXPECT_FALSE(modelAllowed(Names{"triage"}, "tollgate::function_name::triage"));
}

TEST(ModelAllowed, AnEmptyListAllowsNothing) { EXPECT_FALSE(modelAllowed(Names{}, "echo")); }

TEST(ParseRfc3339, ReadsUtcOffsetsAndFractions) {
  constexpr std::int64_t kNewYear2027 = 1'798'761'600'000;
  EXPECT_EQ(parseRfc3339("2027-01-01T00:00:00Z"), kNewYear2027);
  EXPECT_EQ(parseRfc3339("2027-01-01t00:00:00z"), kNewYear2027);
  EXPECT_EQ(parseRfc3339("2027-01-01T00:00:00.250Z"), kNewYear2027 + 250);
  EXPECT_EQ(parseRfc3339("2027-01-01T00:00:00.123456789Z"), kNewYear2027 + 123);
  EXPECT_EQ(parseRfc3339("2027-01-01T01:30:00+01:30"), kNewYear2027);
  EXPECT_EQ(parseRfc3339("2026-12-31T22:00:00-02:00"), kNewYear2027);
  EXPECT_EQ(parseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(parseRfc3339("2028-02-29T00:00:00Z"), 1'835'395'200'000);
}

TEST(ParseRfc3339, RefusesWhatIsNotOne) {
  for (const char* text :
       {"", "2027-01-01", "2027-01-01T00:00:00", "2027-01-01 00:00:00Z", "2027-13-01T00:00:00Z",
        "2027-02-29T00:00:00Z", "2027-01-32T00:00:00Z", "2027-01-01T24:00:00Z",
        "2027-01-01T00:60:00Z", "2027-01-01T00:00:00.Z", "2027-01-01T00:00:00+0100",
        "2027-01-01T00:00:00Z ", "tomorrow", "+2027-01-01T00:00:00Z", "2027-1-01T00:00:00Z"}) {
    EXPECT_FALSE(parseRfc3339(text)) << text;
  }
}

TEST(StoredModels, RoundTrip) {
  const Names names{"echo", "tollgate::function_name::f", "a\"b"};
  EXPECT_EQ(decodeModels(encodeModels(names)), names);
  EXPECT_EQ(decodeModels("[]"), Names{});
  EXPECT_FALSE(decodeModels("[1]"));
  EXPECT_FALSE(decodeModels("{}"));
  EXPECT_FALSE(decodeModels("not json"));
}

TEST(BudgetWindow, DayWeekFromMondayMonthFromTheFirstInUtc) {
  // Thursday 2026-11-26 23:21:19.5 UTC.
  const std::int64_t now = *parseRfc3339("2026-11-26T23:21:19.5Z");
  const auto day = budgetWindowAt(BudgetWindow::Day, now);
  EXPECT_EQ(day.first, *parseRfc3339("2026-11-26T00:00:00Z"));
  EXPECT_EQ(day.second, *parseRfc3339("2026-11-27T00:00:00Z"));
  const auto week = budgetWindowAt(BudgetWindow::Week, now);
  EXPECT_EQ(week.first, *parseRfc3339("2026-11-23T00:00:00Z"));  // Monday.
  EXPECT_EQ(week.second, *parseRfc3339("2026-11-30T00:00:00Z"));
  const auto month = budgetWindowAt(BudgetWindow::Month, now);
  EXPECT_EQ(month.first, *parseRfc3339("2026-11-01T00:00:00Z"));
  EXPECT_EQ(month.second, *parseRfc3339("2026-12-01T00:00:00Z"));
  EXPECT_EQ(budgetWindowAt(BudgetWindow::Month, *parseRfc3339("2026-12-31T23:59:59Z")).second,
            *parseRfc3339("2027-01-01T00:00:00Z"));
  // A Monday at midnight begins its week; a Sunday ends the one before.
  EXPECT_EQ(budgetWindowAt(BudgetWindow::Week, *parseRfc3339("2026-11-30T00:00:00Z")).first,
            *parseRfc3339("2026-11-30T00:00:00Z"));
  EXPECT_EQ(budgetWindowAt(BudgetWindow::Week, *parseRfc3339("2026-11-29T23:59:59Z")).first,
            *parseRfc3339("2026-11-23T00:00:00Z"));
  EXPECT_EQ(budgetWindowAt(BudgetWindow::Total, now),
            std::make_pair(std::int64_t{1}, std::int64_t{0}));
}

TEST(BudgetWindow, NamesReadBackAndNothingElse) {
  for (const BudgetWindow w :
       {BudgetWindow::Day, BudgetWindow::Week, BudgetWindow::Month, BudgetWindow::Total}) {
    EXPECT_EQ(parseBudgetWindow(budgetWindowName(w)), w);
  }
  EXPECT_FALSE(parseBudgetWindow("year"));
  EXPECT_FALSE(parseBudgetWindow("Day"));
  EXPECT_FALSE(parseBudgetWindow(""));
}

}  // namespace
}  // namespace tollgate::key_rules
