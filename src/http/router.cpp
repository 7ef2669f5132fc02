#include "http/router.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/text.hpp"

namespace tollgate::http {
namespace {

/// Splits "/a/b/c" into "a", "b", "c". A trailing slash yields a final empty segment.
std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> out;
  if (!path.empty() && path.front() == '/') {
    path.remove_prefix(1);
  }
  for (;;) {
    const std::size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) {
      return out;
    }
    path.remove_prefix(slash + 1);
  }
}

bool serves(const Route& r, Method m) {
  return r.method == m || (m == Method::Head && r.method == Method::Get);
}

}  // namespace

std::string_view PathParams::get(std::string_view name) const {
  for (std::size_t i = 0; i < size_; ++i) {
    if (names_[i] == name) {
      return values_[i];
    }
  }
  return {};
}

bool PathParams::add(std::string_view name, std::string_view value) {
  if (size_ == kMax) {
    return false;
  }
  names_[size_] = name;
  values_[size_] = value;
  ++size_;
  return true;
}

Router::Router(std::vector<Route> routes, const Authenticator* authenticator)
    : authenticator_(authenticator) {
  for (Route& r : routes) {
    if (r.pattern.empty() || r.pattern.front() != '/' || !r.handler) {
      throw std::invalid_argument("route pattern must start with '/' and have a handler: " +
                                  r.pattern);
    }
    Entry e;
    std::size_t params = 0;
    for (std::string_view s : split(r.pattern)) {
      Segment seg;
      if (s.size() > 2 && s.front() == '{' && s.back() == '}') {
        s = s.substr(1, s.size() - 2);
        seg.kind = Segment::Kind::Param;
        if (s.back() == '*') {
          s.remove_suffix(1);
          seg.kind = Segment::Kind::Rest;
        }
        ++params;
      } else if (s.find_first_of("{}") != std::string_view::npos) {
        throw std::invalid_argument("malformed route segment in " + r.pattern);
      }
      if (!e.segments.empty() && e.segments.back().kind == Segment::Kind::Rest) {
        throw std::invalid_argument("{name*} must be the last segment: " + r.pattern);
      }
      if (params == 0) {
        e.prefix.append("/").append(s);
      }
      seg.text = s;
      e.segments.push_back(std::move(seg));
    }
    if (params > PathParams::kMax) {
      throw std::invalid_argument("too many parameters in " + r.pattern);
    }
    max_body_limit_ = std::max(max_body_limit_, r.body_limit);
    if (params == 0) {
      by_literal_[r.pattern].push_back(entries_.size());
    } else {
      with_params_.push_back(entries_.size());
    }
    e.route = std::move(r);
    entries_.push_back(std::move(e));
  }
  // Each literal path's candidates, in table order: its own entries, and those with a parameter
  // whose literal start it shares (no other entry can match it).
  for (auto& [path, candidates] : by_literal_) {
    for (const std::size_t i : with_params_) {
      if (std::string_view(path).starts_with(entries_[i].prefix)) {
        candidates.push_back(i);
      }
    }
    std::sort(candidates.begin(), candidates.end());
  }
}

bool Router::matches(const Entry& e, std::string_view path, PathParams& params) {
  if (path.empty() || path.front() != '/') {
    return false;
  }
  path.remove_prefix(1);
  for (const Segment& seg : e.segments) {
    if (seg.kind == Segment::Kind::Rest) {
      return params.add(seg.text, path);
    }
    if (path.data() == nullptr) {
      return false;  // The path has fewer segments than the pattern.
    }
    const std::size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (seg.kind == Segment::Kind::Literal ? part != seg.text
                                           : part.empty() || !params.add(seg.text, part)) {
      return false;
    }
    path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
  }
  return path.data() == nullptr;  // Every segment of the path was matched.
}

std::optional<Error> Router::admit(const Route& route, std::string_view authorization,
                                   exchange::Caller& caller) const {
  if (route.access == Access::Public || authenticator_ == nullptr) {
    return std::nullopt;
  }
  return authenticator_->authenticate(authorization, caller);
}

Routing Router::route(Method method, std::string_view path, std::string_view content_type) const {
  Routing out;
  std::string allow;
  PathParams params;  // One for every entry tried: not made again (and zeroed) for each.
  // The candidates in table order, as a scan of the whole table would meet them: a literal
  // path's own (see the constructor), else every entry with a parameter.
  const auto literal = by_literal_.find(path);
  const std::vector<std::size_t>& candidates =
      literal == by_literal_.end() ? with_params_ : literal->second;
  for (const std::size_t candidate : candidates) {
    const Entry& e = entries_[candidate];
    if (!path.starts_with(e.prefix)) {
      continue;
    }
    params.clear();
    if (!matches(e, path, params)) {
      continue;
    }
    if (!serves(e.route, method)) {
      const std::string_view name = methodName(e.route.method);
      if (allow.find(name) == std::string::npos) {
        allow.append(allow.empty() ? "" : ", ").append(name);
        if (e.route.method == Method::Get) {
          allow.append(", HEAD");
        }
      }
      continue;
    }
    const auto& types = e.route.content_types;
    if (!types.empty() && std::none_of(types.begin(), types.end(), [&](const std::string& t) {
          return text::isMediaType(content_type, t);
        })) {
      out.refusal = Response::error(
          Error{ErrorKind::UnsupportedMediaType, "Content-Type must be " + types.front(), ""});
      return out;
    }
    out.route = &e.route;
    out.params = params;
    return out;
  }
  if (!allow.empty()) {
    out.refusal = Response::error(
        Error{ErrorKind::MethodNotAllowed, std::string(path) + " accepts " + allow + " only", ""});
    out.refusal.header("Allow", allow);
    return out;
  }
  out.refusal = Response::error(routeNotFound(path));
  return out;
}

Error routeNotFound(std::string_view path) {
  return Error{ErrorKind::RouteNotFound,
               "no endpoint " + text::printable(path) +
                   " (the base URL must end in /v1, e.g. http://host:port/v1)",
               ""};
}

}  // namespace tollgate::http
