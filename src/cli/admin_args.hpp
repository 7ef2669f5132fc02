// The words of one `tollgate admin` command: positionals and --options, read once, and the two
// kinds of mistake a command reports (a usage error, exit 2 with the usage text; a refused
// operation or a value that is not one, exit 1 with its line).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tollgate::cli::admin {

/// A usage mistake: exit 2 with the usage text.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A refused operation or a value that is not one: exit 1 with its line.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// One command's words: positionals and --options (a value each, but the listed flags).
class Args {
 public:
  Args(std::span<const std::string> words, std::set<std::string_view> valued,
       std::set<std::string_view> flags);

  /// Positional `i`; a UsageError naming `what` when there is none.
  const std::string& at(std::size_t i, std::string_view what) const;
  /// A UsageError when there are more than `n` positionals.
  void expect(std::size_t n) const;
  std::optional<std::string> option(const std::string& name) const;
  /// The option's value; a UsageError when it is absent.
  std::string required(const std::string& name) const;
  bool flag(const std::string& name) const { return options_.contains(name); }

 private:
  std::vector<std::string> positional_;
  std::map<std::string, std::string> options_;
};

/// Parses a time span of --expires: 30m, 12h, 7d (at most 365d); a UserError otherwise.
std::chrono::milliseconds duration(const std::string& text);

}  // namespace tollgate::cli::admin
