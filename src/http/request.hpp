// The request a handler sees: method, path, query, path parameters, headers and body, as views
// into the session's parsed message. No Beast type crosses this line.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "core/spool.hpp"

namespace tollgate::http {

enum class Method { Get, Head, Post, Put, Patch, Delete, Options, Other };

/// The method named `text` (case-sensitive, RFC 9110 §9.1); Other for the rest.
Method parseMethod(std::string_view text);

/// The canonical name of a known method, e.g. "GET".
std::string_view methodName(Method m);

/// Header lookup over the session's parsed head; names are case-insensitive.
class Headers {
 public:
  virtual ~Headers() = default;
  /// The first value of `name`, or an empty view when absent.
  virtual std::string_view get(std::string_view name) const = 0;
};

/// The `{name}` segments of a route pattern, bound to this request's path.
class PathParams {
 public:
  static constexpr std::size_t kMax = 4;

  /// The value bound to `name`, or an empty view.
  std::string_view get(std::string_view name) const;
  bool add(std::string_view name, std::string_view value);
  /// Unbinds every name (the views left behind are never read).
  void clear() { size_ = 0; }

 private:
  std::array<std::string_view, kMax> names_{};
  std::array<std::string_view, kMax> values_{};
  std::size_t size_ = 0;
};

struct Request {
  Method method = Method::Other;
  std::string_view path;   ///< Without the query; never empty.
  std::string_view query;  ///< After '?', may be empty.
  unsigned version = 11;   ///< 10 or 11.
  const Headers* headers = nullptr;
  std::string* body = nullptr;  ///< Owned by the session; handlers may parse it in place.
  PathParams params;
  /// The whole body, in memory or past the route's memory limit in a temporary file; `body` is
  /// its memory, complete only while it is not in a file.
  const Spool* spool = nullptr;
  /// Who sent it: the client's IP address, or behind a trusted proxy the address it forwarded
  /// for (address::requestSource); what the audit log records and sign-in throttles count.
  std::string_view source;

  std::string_view header(std::string_view name) const {
    return headers != nullptr ? headers->get(name) : std::string_view{};
  }
};

}  // namespace tollgate::http
