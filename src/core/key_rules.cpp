#include "core/key_rules.hpp"

#include <algorithm>
#include <chrono>

#include "core/json.hpp"

namespace tollgate::key_rules {
namespace {

constexpr std::string_view kModelPrefix = "tollgate::model_name::";
constexpr std::string_view kEmbeddingModelPrefix = "tollgate::embedding_model_name::";
constexpr std::string_view kFunctionPrefix = "tollgate::function_name::";

/// The number of `width` digits at `at`, or nullopt.
std::optional<int> digits(std::string_view s, std::size_t at, std::size_t width) {
  if (at + width > s.size()) {
    return std::nullopt;
  }
  int n = 0;
  for (std::size_t i = at; i < at + width; ++i) {
    if (s[i] < '0' || s[i] > '9') {
      return std::nullopt;
    }
    n = n * 10 + (s[i] - '0');
  }
  return n;
}

bool isAt(std::string_view s, std::size_t at, char c) { return at < s.size() && s[at] == c; }

}  // namespace

std::string_view bareModelId(std::string_view name) {
  for (const std::string_view prefix : {kModelPrefix, kEmbeddingModelPrefix}) {
    if (name.starts_with(prefix)) {
      return name.substr(prefix.size());
    }
  }
  return name;
}

bool isFunctionName(std::string_view name, std::string_view& function) {
  if (!name.starts_with(kFunctionPrefix)) {
    return false;
  }
  function = name.substr(kFunctionPrefix.size());
  return true;
}

bool modelAllowed(std::span<const std::string> allowed, std::string_view requested) {
  std::string_view function;
  if (isFunctionName(requested, function)) {
    return std::find(allowed.begin(), allowed.end(), requested) != allowed.end();
  }
  const std::string_view id = bareModelId(requested);
  return std::any_of(allowed.begin(), allowed.end(), [id](const std::string& a) {
    std::string_view unused;
    return !isFunctionName(a, unused) && bareModelId(a) == id;
  });
}

std::optional<std::int64_t> parseRfc3339(std::string_view s) {
  // date-time = full-date "T" partial-time time-offset (RFC 3339 §5.6); T and Z in any case.
  const auto year = digits(s, 0, 4);
  const auto month = digits(s, 5, 2);
  const auto day = digits(s, 8, 2);
  const auto hour = digits(s, 11, 2);
  const auto minute = digits(s, 14, 2);
  const auto second = digits(s, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || !isAt(s, 4, '-') ||
      !isAt(s, 7, '-') || !(isAt(s, 10, 'T') || isAt(s, 10, 't')) || !isAt(s, 13, ':') ||
      !isAt(s, 16, ':')) {
    return std::nullopt;
  }
  const std::chrono::year_month_day date{std::chrono::year{*year},
                                         std::chrono::month{static_cast<unsigned>(*month)},
                                         std::chrono::day{static_cast<unsigned>(*day)}};
  // A leap second (60) is read as the next second's start.
  if (!date.ok() || *hour > 23 || *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  std::size_t at = 19;
  std::int64_t ms = 0;
  if (isAt(s, at, '.')) {
    ++at;
    const std::size_t first = at;
    std::int64_t scale = 100;
    while (at < s.size() && s[at] >= '0' && s[at] <= '9') {
      ms += (s[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (at == first) {
      return std::nullopt;
    }
  }
  std::int64_t offset_minutes = 0;
  if (isAt(s, at, 'Z') || isAt(s, at, 'z')) {
    ++at;
  } else if (isAt(s, at, '+') || isAt(s, at, '-')) {
    const auto oh = digits(s, at + 1, 2);
    const auto om = digits(s, at + 4, 2);
    if (!oh || !om || !isAt(s, at + 3, ':') || *oh > 23 || *om > 59) {
      return std::nullopt;
    }
    offset_minutes = (*oh * 60 + *om) * (s[at] == '-' ? -1 : 1);
    at += 6;
  } else {
    return std::nullopt;
  }
  if (at != s.size()) {
    return std::nullopt;
  }
  const std::int64_t days = std::chrono::sys_days{date}.time_since_epoch().count();
  const std::int64_t seconds =
      days * 86'400 + *hour * 3'600 + *minute * 60 + *second - offset_minutes * 60;
  return seconds * 1'000 + ms;
}

std::string encodeModels(std::span<const std::string> models) {
  json::Writer w;
  w.startArray();
  for (const std::string& m : models) {
    w.string(m);
  }
  w.endArray();
  return w.take();
}

std::optional<std::vector<std::string>> decodeModels(const std::string& text) {
  rapidjson::Document doc;
  if (json::parse(doc, text) || !doc.IsArray()) {
    return std::nullopt;
  }
  std::vector<std::string> out;
  for (const rapidjson::Value& v : doc.GetArray()) {
    if (!v.IsString()) {
      return std::nullopt;
    }
    out.emplace_back(json::view(v));
  }
  return out;
}

std::string_view budgetWindowName(BudgetWindow w) {
  switch (w) {
    case BudgetWindow::Day:
      return "day";
    case BudgetWindow::Week:
      return "week";
    case BudgetWindow::Month:
      return "month";
    case BudgetWindow::Total:
      break;
  }
  return "total";
}

std::optional<BudgetWindow> parseBudgetWindow(std::string_view name) {
  for (const BudgetWindow w :
       {BudgetWindow::Day, BudgetWindow::Week, BudgetWindow::Month, BudgetWindow::Total}) {
    if (budgetWindowName(w) == name) {
      return w;
    }
  }
  return std::nullopt;
}

std::pair<std::int64_t, std::int64_t> budgetWindowAt(BudgetWindow w, std::int64_t now_ms) {
  using std::chrono::days;
  using std::chrono::milliseconds;
  using std::chrono::sys_days;
  const auto ms = [](sys_days d) {
    return std::chrono::duration_cast<milliseconds>(d.time_since_epoch()).count();
  };
  const sys_days today =
      std::chrono::floor<days>(std::chrono::sys_time<milliseconds>(milliseconds(now_ms)));
  switch (w) {
    case BudgetWindow::Day:
      return {ms(today), ms(today + days(1))};
    case BudgetWindow::Week: {
      const sys_days monday = today - (std::chrono::weekday(today) - std::chrono::Monday);
      return {ms(monday), ms(monday + days(7))};
    }
    case BudgetWindow::Month: {
      const std::chrono::year_month_day date(today);
      const auto first = date.year() / date.month() / std::chrono::day(1);
      return {ms(sys_days(first)), ms(sys_days(first + std::chrono::months(1)))};
    }
    case BudgetWindow::Total:
      break;
  }
  return {1, 0};
}

}  // namespace tollgate::key_rules
