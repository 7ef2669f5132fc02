#include "config/live_config.hpp"

#include <tuple>

namespace tollgate::config {
namespace {

/// The members of a section compared as one, by their values.
auto storageKey(const Storage& s) {
  return std::tie(s.url, s.server_secret, s.spend_retention_days, s.audit_retention_days);
}

auto cacheKey(const Cache& c) {
  return std::tie(c.memory_bytes, c.team_max_bytes, c.retention_seconds,
                  c.idempotency_window_seconds);
}

auto oidcKey(const Oidc& o) { return std::tie(o.issuer, o.client_id, o.client_secret); }

bool sameConsole(const Console& a, const Console& b) {
  const auto key = [](const Console& c) {
    return std::tie(c.enabled, c.host, c.port, c.public_url, c.owner_email, c.allow_signup,
                    c.allowed_email_domains, c.login_links, c.session_idle, c.session_lifetime,
                    c.max_teams_per_user);
  };
  const bool same_oidc =
      a.oidc.has_value() == b.oidc.has_value() && (!a.oidc || oidcKey(*a.oidc) == oidcKey(*b.oidc));
  return key(a) == key(b) && same_oidc;
}

/// Copies `running`'s `member` into `next`, noting `name` when they differed.
template <class T>
void keep(T& next, const T& running, bool same, const char* name,
          std::vector<std::string>& changed) {
  if (!same) {
    changed.emplace_back(name);
    next = running;
  }
}

}  // namespace

std::vector<std::string> keepRestartOnly(Config& next, const Config& running) {
  std::vector<std::string> changed;
  Gateway& g = next.gateway;
  const Gateway& r = running.gateway;
  if (g.host != r.host || g.port != r.port) {
    changed.emplace_back("gateway.listen");
    g.host = r.host;
    g.port = r.port;
  }
  keep(g.auth, r.auth, g.auth == r.auth, "gateway.auth", changed);
  keep(g.open_team, r.open_team, g.open_team == r.open_team, "gateway.open_team", changed);
  keep(g.workers, r.workers, g.workers == r.workers, "gateway.workers", changed);
  keep(g.max_body_bytes, r.max_body_bytes, g.max_body_bytes == r.max_body_bytes,
       "gateway.max_body_bytes", changed);
  keep(g.max_upload_bytes, r.max_upload_bytes, g.max_upload_bytes == r.max_upload_bytes,
       "gateway.max_upload_bytes", changed);
  keep(g.lease, r.lease, g.lease == r.lease, "gateway.lease_ms", changed);
  keep(next.storage, running.storage, storageKey(next.storage) == storageKey(running.storage),
       "storage", changed);
  keep(next.cache, running.cache, cacheKey(next.cache) == cacheKey(running.cache), "cache",
       changed);
  keep(next.console, running.console, sameConsole(next.console, running.console), "console",
       changed);
  return changed;
}

}  // namespace tollgate::config
