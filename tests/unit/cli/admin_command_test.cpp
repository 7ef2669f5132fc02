// The tables of `tollgate admin`: each noun's table has exactly the verbs its usage lines name,
// no name twice (a noun that is a command of its own has none), and the usage text is the nouns'
// lines in table order between the command line and the roles.
#include "cli/admin_command.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace tollgate::cli::admin {
namespace {

/// The verbs a noun's usage lines name: the first word of each alternative (split at " | " and
/// at line ends), after the noun itself where a line starts with it.
std::multiset<std::string> verbsInUsage(const Noun& noun) {
  std::multiset<std::string> verbs;
  std::istringstream lines{std::string(noun.usage)};
  for (std::string line; std::getline(lines, line);) {
    for (std::size_t from = 0; from < line.size();) {
      const std::size_t bar = std::min(line.find(" |", from), line.size());
      std::istringstream words(line.substr(from, bar - from));
      std::string word;
      words >> word;
      if (word == noun.name) {
        words >> word;
      }
      if (!word.empty()) {
        verbs.insert(word);
      }
      from = bar + 2;
    }
  }
  return verbs;
}

TEST(AdminCommands, EachNounsTableHasTheVerbsItsUsageNames) {
  ASSERT_EQ(nouns().size(), 9u);
  for (const Noun* noun : nouns()) {
    if (noun->direct != nullptr) {
      EXPECT_TRUE(noun->verbs.empty()) << noun->name << " is a command of its own: no verbs";
      continue;
    }
    std::multiset<std::string> in_table;
    for (const Verb& v : noun->verbs) {
      in_table.insert(std::string(v.name));
      EXPECT_NE(v.run, nullptr) << noun->name << " " << v.name;
    }
    EXPECT_EQ(in_table, verbsInUsage(*noun)) << noun->name;
    EXPECT_EQ(std::set<std::string>(in_table.begin(), in_table.end()).size(), in_table.size())
        << noun->name << " names a verb twice";
  }
}

TEST(AdminCommands, TheUsageListsTheNounsInTableOrder) {
  std::string expected = "usage: tollgate admin [--config FILE | --data-dir DIR] COMMAND\n";
  std::set<std::string_view> names;
  for (const Noun* noun : nouns()) {
    EXPECT_TRUE(names.insert(noun->name).second) << noun->name << " is listed twice";
    ASSERT_TRUE(noun->usage.starts_with("  " + std::string(noun->name) + " ")) << noun->name;
    ASSERT_TRUE(noun->usage.ends_with("\n")) << noun->name;
    expected += noun->usage;
  }
  EXPECT_EQ(usage(), expected + "roles: owner, admin, member, viewer\n");
  EXPECT_EQ(names, (std::set<std::string_view>{"teams", "users", "members", "invites", "keys",
                                               "spend", "audit", "alerts", "login-link"}));
}

}  // namespace
}  // namespace tollgate::cli::admin
