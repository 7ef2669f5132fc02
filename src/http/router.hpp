// The route table and its matcher. Each route declares its method, its path pattern (literal
// segments, `{name}` for one segment, a final `{name*}` for the rest of the path), who may call
// it, its body limit, the content types it accepts and its handler. 404, 405 (with Allow), 415
// and the per-route body limit all come from this table.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/string_map.hpp"
#include "exchange/request_context.hpp"
#include "http/authenticator.hpp"
#include "http/request.hpp"
#include "http/response.hpp"
#include "http/writer.hpp"

namespace tollgate::http {

using Handler = std::function<boost::asio::awaitable<void>(exchange::RequestContext&, Request&,
                                                           ResponseWriter&)>;

/// Who may call a route.
enum class Access {
  Public,  ///< Anyone: health, readiness.
  ApiKey,  ///< A caller with an API key (the auth layer decides, by the gateway's auth mode).
};

struct Route {
  Method method = Method::Get;  ///< A GET route serves HEAD too (RFC 9110 §9.3.2).
  std::string pattern;          ///< e.g. "/v1/models/{id}"
  Access access = Access::Public;
  std::size_t body_limit = 0;  ///< Larger bodies are refused with 413.
  /// Accepted media types of the body, e.g. {"application/json"}; empty accepts any.
  std::vector<std::string> content_types;
  Handler handler;
  /// Bodies larger than this are kept in a temporary file (Request::spool), not in memory.
  std::size_t memory_limit = std::numeric_limits<std::size_t>::max();
  /// Takes an Idempotency-Key header: a request that carries one is not cancelled when its
  /// client leaves, so that its answer runs to its end and is kept for the client's retry.
  bool idempotent = false;
};

/// The route that serves a request head, or the response that refuses it.
struct Routing {
  const Route* route = nullptr;  ///< nullptr when refused.
  PathParams params;
  Response refusal;
};

/// The refusal of a path no route serves (404): what the router answers, and what a route that
/// hides itself from a caller answers too.
Error routeNotFound(std::string_view path);

class Router {
 public:
  /// Throws std::invalid_argument for a malformed pattern (a table bug, found at startup).
  /// Without an authenticator (open mode) every route is public.
  explicit Router(std::vector<Route> routes, const Authenticator* authenticator = nullptr);

  /// Matches a request head: the path (without query), method and Content-Type header.
  Routing route(Method method, std::string_view path, std::string_view content_type) const;

  /// Checks the caller of a routed request before its body is read: nullopt when the route is
  /// public or the key is good (`caller` filled), else the 401 or 403.
  std::optional<Error> admit(const Route& route, std::string_view authorization,
                             exchange::Caller& caller) const;

  /// The largest body limit of any route: the most a request body may be before it is routed.
  std::size_t maxBodyLimit() const { return max_body_limit_; }

 private:
  struct Segment {
    std::string text;  ///< A literal, or a parameter's name.
    enum class Kind { Literal, Param, Rest } kind = Kind::Literal;
  };
  struct Entry {
    Route route;
    std::vector<Segment> segments;
    /// The pattern's literal segments before its first parameter, e.g. "/console/api/keys":
    /// a path that does not start with them cannot match, and is passed over at once.
    std::string prefix;
  };

  static bool matches(const Entry& e, std::string_view path, PathParams& params);

  std::vector<Entry> entries_;
  /// The entries that may match a literal pattern's path, in table order: those whose pattern
  /// is that path (a literal pattern matches only the same text), and those with a parameter
  /// whose literal start it shares.
  StringMap<std::vector<std::size_t>> by_literal_;
  std::vector<std::size_t> with_params_;
  const Authenticator* authenticator_;
  std::size_t max_body_limit_ = 0;
};

}  // namespace tollgate::http
