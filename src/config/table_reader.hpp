// Reading one TOML table of the configuration: typed getters that fail with the dotted key and
// what is wrong (a ConfigError), shared by the readers of each section.
#pragma once

#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace tollgate::config {

inline constexpr std::int64_t kMaxTimeoutMs = 24LL * 3600 * 1000;
/// How a value names an environment variable instead: env::VARIABLE.
inline constexpr std::string_view kEnvPrefix = "env::";

class TableReader;

/// The table's `listen = "HOST:PORT"` into `host` and `port` (unchanged when absent): an IPv4
/// address, an IPv6 address in brackets, or localhost; port 0 picks a free one.
void parseListen(const TableReader& r, std::string& host, std::uint16_t& port);

/// The http(s) URL `text` of `key`: a host, an optional port and a path; nothing that two URL
/// readers could take differently, and nothing the request head (written by hand) cannot carry.
UpstreamUrl parseHttpUrl(const TableReader& r, std::string_view key, const std::string& text);

/// Whether `host` (as UpstreamUrl keeps it: an IPv6 address without brackets) is this machine's
/// loopback: localhost, 127.0.0.0/8 or ::1 (where a service may be reached over plain http).
bool isLoopbackUrlHost(const std::string& host);

/// Whether `text` holds a space or a control character (which no header value, host or version
/// the gateway writes may carry).
bool hasControlOrSpace(std::string_view text);

/// The secret `key` names as env::VARIABLE: the variable's value (not empty, no spaces or control
/// characters); empty when the key is absent.
std::string envSecret(const TableReader& r, std::string_view key, const EnvLookup& env);

/// Walks one TOML table, remembering the dotted path for error messages.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string path, const std::string& file)
      : table_(table), path_(std::move(path)), file_(file) {}

  [[noreturn]] void fail(std::string_view key, std::string reason) const {
    throw ConfigError(file_, qualified(key), std::move(reason));
  }

  std::string qualified(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  void allowOnly(std::initializer_list<std::string_view> keys) const {
    allowOnly(std::span<const std::string_view>(keys.begin(), keys.size()));
  }
  void allowOnly(std::span<const std::string_view> keys) const {
    for (const auto& [k, _] : table_) {
      if (std::find(keys.begin(), keys.end(), k.str()) == keys.end()) {
        fail(k.str(), "unknown key");
      }
    }
  }

  const toml::node* find(std::string_view key) const { return table_.get(key); }

  std::optional<std::string> string(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return std::nullopt;
    }
    if (!n->is_string()) {
      fail(key, "must be a string");
    }
    return n->as_string()->get();
  }

  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min,
                                      std::int64_t max) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return std::nullopt;
    }
    if (!n->is_integer()) {
      fail(key, "must be an integer");
    }
    const std::int64_t v = n->as_integer()->get();
    if (v < min || v > max) {
      fail(key, "must be between " + std::to_string(min) + " and " + std::to_string(max));
    }
    return v;
  }

  std::optional<double> number(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return std::nullopt;
    }
    double v = 0;
    if (n->is_integer()) {
      v = static_cast<double>(n->as_integer()->get());
    } else if (n->is_floating_point()) {
      v = n->as_floating_point()->get();
    } else {
      fail(key, "must be a number");
    }
    // -0.0 compares equal to 0 but prints as "-0": refused like any other negative value.
    if (!std::isfinite(v) || v < 0 || std::signbit(v)) {
      fail(key, "must be a finite number >= 0");
    }
    return v;
  }

  /// A number within [min, max] (an integer or a float).
  std::optional<double> numberIn(std::string_view key, double min, double max) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return std::nullopt;
    }
    const std::optional<double> v =
        n->is_integer() ? std::optional<double>(static_cast<double>(n->as_integer()->get()))
        : n->is_floating_point() ? std::optional<double>(n->as_floating_point()->get())
                                 : std::nullopt;
    if (!v || !std::isfinite(*v) || *v < min || *v > max) {
      std::array<char, 32> lo{};
      std::array<char, 32> hi{};
      const auto lo_end = std::to_chars(lo.data(), lo.data() + lo.size(), min).ptr;
      const auto hi_end = std::to_chars(hi.data(), hi.data() + hi.size(), max).ptr;
      fail(key, "must be a number from " + std::string(lo.data(), lo_end) + " to " +
                    std::string(hi.data(), hi_end));
    }
    return v;
  }

  /// A price in USD, exact. TOML gives a double; its shortest round-trip text is the decimal
  /// that was written (for up to 15 significant digits), which is then read exactly.
  std::optional<money::Pico> usd(std::string_view key) const {
    const auto v = number(key);
    if (!v) {
      return std::nullopt;
    }
    const auto pico = exactUsd(*v);
    if (!pico) {
      failUsd(key);
    }
    return pico;
  }

  /// The amount a TOML number `v` (>= 0) writes, exactly (see usd()); nullopt when it has a digit
  /// finer than a pico-USD or does not fit.
  static std::optional<money::Pico> exactUsd(double v) {
    std::array<char, 64> text{};
    const auto [end, ec] = std::to_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() ? money::parseUsd(std::string_view(text.data(), end)) : std::nullopt;
  }

  /// Fails `key` as not an amount usd() can read.
  [[noreturn]] void failUsd(std::string_view key) const {
    fail(key, "must be an amount in USD with at most 12 decimal places (a pico-USD), below " +
                  money::formatUsd(std::numeric_limits<money::Pico>::max()));
  }

  std::optional<bool> boolean(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return std::nullopt;
    }
    if (!n->is_boolean()) {
      fail(key, "must be true or false");
    }
    return n->as_boolean()->get();
  }

  std::optional<std::vector<std::string>> strings(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return std::nullopt;
    }
    const toml::array* arr = n->as_array();
    if (arr == nullptr) {
      fail(key, "must be an array of strings");
    }
    std::vector<std::string> out;
    for (const toml::node& item : *arr) {
      if (!item.is_string()) {
        fail(key, "must be an array of strings");
      }
      out.push_back(item.as_string()->get());
    }
    return out;
  }

  const toml::table* table(std::string_view key) const {
    const toml::node* n = find(key);
    if (n == nullptr) {
      return nullptr;
    }
    if (!n->is_table()) {
      fail(key, "must be a table");
    }
    return n->as_table();
  }

  Millis millis(std::string_view key, Millis fallback) const {
    return Millis(integer(key, 1, kMaxTimeoutMs).value_or(fallback.count()));
  }

  const std::string& file() const { return file_; }
  const toml::table& table() const { return table_; }

 private:
  const toml::table& table_;
  std::string path_;
  const std::string& file_;
};

}  // namespace tollgate::config
