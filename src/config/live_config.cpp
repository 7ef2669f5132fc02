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
  // The exporter is made at start; the sample ratio applies to the next exchange.
  Traces& t = next.traces;
  const Traces& rt = running.traces;
  keep(t.endpoint, rt.endpoint, t.endpoint == rt.endpoint, "traces.endpoint", changed);
  keep(t.headers, rt.headers, t.headers == rt.headers, "traces.headers", changed);
  keep(t.max_queue_spans, rt.max_queue_spans, t.max_queue_spans == rt.max_queue_spans,
       "traces.max_queue_spans", changed);
  keep(next.log.format, running.log.format, next.log.format == running.log.format, "log.format",
       changed);
  // The ledger's amounts and the webhook sender are set at start.
  Alerts& a = next.alerts;
  const Alerts& ra = running.alerts;
  keep(a.webhook_url, ra.webhook_url, a.webhook_url == ra.webhook_url, "alerts.webhook_url",
       changed);
  keep(a.webhook_secret, ra.webhook_secret, a.webhook_secret == ra.webhook_secret,
       "alerts.webhook_secret", changed);
  keep(a.balance_below, ra.balance_below, a.balance_below == ra.balance_below,
       "alerts.balance_below_usd", changed);
  // The console's listener, its origin (cookie names, redirect URIs), its first owner and the
  // session policy the accounts service was built with need a restart; its identity provider,
  // sign-up and sign-in rules and team quota apply to the next call.
  Console& c = next.console;
  const Console& rc = running.console;
  keep(c.enabled, rc.enabled, c.enabled == rc.enabled, "console.enabled", changed);
  if (c.host != rc.host || c.port != rc.port) {
    changed.emplace_back("console.listen");
    c.host = rc.host;
    c.port = rc.port;
  }
  keep(c.public_url, rc.public_url, c.public_url == rc.public_url, "console.public_url", changed);
  keep(c.owner_email, rc.owner_email, c.owner_email == rc.owner_email, "console.owner_email",
       changed);
  keep(c.session_idle, rc.session_idle, c.session_idle == rc.session_idle,
       "console.session_idle_seconds", changed);
  keep(c.session_lifetime, rc.session_lifetime, c.session_lifetime == rc.session_lifetime,
       "console.session_lifetime_seconds", changed);
  // Whether metrics are kept and the money counters' labels are set at start; who may scrape
  // applies to the next scrape.
  Metrics& m = next.metrics;
  const Metrics& rm = running.metrics;
  keep(m.enabled, rm.enabled, m.enabled == rm.enabled, "metrics.enabled", changed);
  keep(m.team_labels, rm.team_labels, m.team_labels == rm.team_labels, "metrics.team_labels",
       changed);
  keep(m.max_teams, rm.max_teams, m.max_teams == rm.max_teams, "metrics.max_teams", changed);
  return changed;
}

}  // namespace tollgate::config
