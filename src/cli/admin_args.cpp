#include "cli/admin_args.hpp"

#include <cstdint>

#include "core/text.hpp"

namespace tollgate::cli::admin {

Args::Args(std::span<const std::string> words, std::set<std::string_view> valued,
           std::set<std::string_view> flags) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.starts_with("--")) {
      const std::string_view name = std::string_view(w).substr(2);
      if (flags.contains(name)) {
        options_[std::string(name)] = "";
      } else if (valued.contains(name) && i + 1 < words.size()) {
        options_[std::string(name)] = words[++i];
      } else {
        throw UsageError(valued.contains(name) ? w + " needs a value" : "unknown option " + w);
      }
    } else {
      positional_.push_back(w);
    }
  }
}

const std::string& Args::at(std::size_t i, std::string_view what) const {
  if (i >= positional_.size()) {
    throw UsageError("missing " + std::string(what));
  }
  return positional_[i];
}

void Args::expect(std::size_t n) const {
  if (positional_.size() > n) {
    throw UsageError("unexpected argument " + text::printable(positional_[n], 60));
  }
}

std::optional<std::string> Args::option(const std::string& name) const {
  const auto it = options_.find(name);
  return it == options_.end() ? std::nullopt : std::optional(it->second);
}

std::string Args::required(const std::string& name) const {
  auto v = option(name);
  if (!v) {
    throw UsageError("--" + name + " is required");
  }
  return *v;
}

std::chrono::milliseconds duration(const std::string& text) {
  constexpr std::int64_t kMaxDays = 365;
  if (text.size() < 2) {
    throw UserError("--expires must be like 30m, 12h or 7d");
  }
  std::int64_t n = 0;
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || n > kMaxDays * 24 * 60) {
      throw UserError("--expires must be like 30m, 12h or 7d");
    }
    n = n * 10 + (text[i] - '0');
  }
  const char unit = text.back();
  const std::int64_t minutes = unit == 'm' ? n : unit == 'h' ? n * 60 : unit == 'd' ? n * 1440 : -1;
  if (minutes <= 0 || minutes > kMaxDays * 1440) {
    throw UserError("--expires must be between 1m and 365d, like 30m, 12h or 7d");
  }
  return std::chrono::minutes(minutes);
}

}  // namespace tollgate::cli::admin
