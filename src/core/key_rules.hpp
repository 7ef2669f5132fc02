// The rules an API key may carry of its own: when it expires and which models it may ask for
// (the names as a client writes them). Pure: the store keeps them, the key table holds them in
// memory, the request path checks them, and the console and `tollgate admin` read them from
// people.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tollgate::key_rules {

/// Rate limits (docs/limits.md): of the configuration's defaults, or a key's or team's own; each
/// absent: not limited (a key's or team's own: the configured default applies). Windows are
/// calendar minutes (UTC); `concurrent` counts requests in flight.
struct RateLimits {
  std::optional<std::int64_t> rpm;
  std::optional<std::int64_t> tpm;
  std::optional<std::int64_t> concurrent;

  bool any() const { return rpm || tpm || concurrent; }
  bool operator==(const RateLimits&) const = default;
};

/// The window of a key's spend budget: a UTC day, a week from Monday 00:00 UTC, a month from the
/// 1st 00:00 UTC, or all time.
enum class BudgetWindow : std::uint8_t { Day, Week, Month, Total };

/// A key's spend budget: at most `pico_usd` charged to it in each window.
struct Budget {
  std::int64_t pico_usd = 0;
  BudgetWindow window = BudgetWindow::Month;
  bool operator==(const Budget&) const = default;
};

/// "day", "week", "month" or "total".
std::string_view budgetWindowName(BudgetWindow w);
/// The window named `name`; nullopt for any other word.
std::optional<BudgetWindow> parseBudgetWindow(std::string_view name);
/// The window of kind `w` holding `now_ms`: its start and end (ms since the epoch, UTC); a total
/// budget's is [1, 0): it starts at the epoch's first millisecond and never ends.
std::pair<std::int64_t, std::int64_t> budgetWindowAt(BudgetWindow w, std::int64_t now_ms);

/// What a key is restricted to; each rule absent means "no restriction".
struct KeyRules {
  std::optional<std::int64_t> expires_at;                  ///< ms since the epoch
  std::optional<std::vector<std::string>> allowed_models;  ///< model ids or function names
  RateLimits limits;             ///< Its own rate limits; each absent: [limits.key]'s.
  std::optional<Budget> budget;  ///< Its spend budget; none: only its team's balance bounds it.
};

/// Whether a key that allows `allowed` may ask for `requested`. A model id also allows its
/// tollgate::model_name:: and tollgate::embedding_model_name:: forms (and either form in the
/// list allows the other); a function is allowed only as tollgate::function_name::NAME, and its
/// variants then use any model.
bool modelAllowed(std::span<const std::string> allowed, std::string_view requested);

/// The model id `name` names: `name` without a tollgate::model_name:: or
/// tollgate::embedding_model_name:: prefix; `name` itself otherwise.
std::string_view bareModelId(std::string_view name);

/// True when `name` is written tollgate::function_name::NAME; `function` is then NAME.
bool isFunctionName(std::string_view name, std::string_view& function);

/// Reads an RFC 3339 date-time (2026-12-31T23:59:59Z, with an optional fraction of a second and
/// a Z or ±HH:MM offset) as ms since the epoch; nullopt when it is not one.
std::optional<std::int64_t> parseRfc3339(std::string_view text);

/// The list as the store keeps it: a JSON array of strings.
std::string encodeModels(std::span<const std::string> models);
/// The list the store kept; nullopt when the text is not an array of strings.
std::optional<std::vector<std::string>> decodeModels(const std::string& text);

}  // namespace tollgate::key_rules
