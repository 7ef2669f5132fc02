#include "cli/serve.hpp"

#include <cstdio>
#include <memory>

#include "accounts/account_service.hpp"
#include "accounts/accounts.hpp"
#include "accounts/sessions.hpp"
#include "alerts/webhook_sender.hpp"
#include "api/routes.hpp"
#include "auth/key_authenticator.hpp"
#include "auth/key_follower.hpp"
#include "billing/ledger.hpp"
#include "cache/answer_cache.hpp"
#include "config/console_config.hpp"
#include "console/console_routes.hpp"
#include "core/ids.hpp"
#include "core/log.hpp"
#include "limits/limiter.hpp"
#include "net/outbound.hpp"
#include "net/server.hpp"
#include "providers/adapter.hpp"
#include "routing/breaker.hpp"
#include "store/alert_store.hpp"
#include "store/migrations.hpp"
#include "store/writer.hpp"
#include "telemetry/metrics.hpp"
#include "telemetry/metrics_route.hpp"
#include "telemetry/span_exporter.hpp"

namespace tollgate::cli {
namespace {

constexpr std::int64_t kMsPerSecond = 1000;

/// A new store's console owner: [console] owner_email made an owner of team `default`, and a
/// one-time sign-in link for them printed beside the first key.
void bootstrapOwner(accounts::Accounts& acc, const config::Config& config) {
  const accounts::Actor op;
  const auto team = acc.showTeam(op, "default");
  if (!team || !config.console.enabled || !config.console.login_links) {
    return;
  }
  if (!acc.addUser(config.console.owner_email, "")) {
    return;
  }
  if (!acc.addMember(op, "default", config.console.owner_email, "owner")) {
    return;
  }
  const auto link = acc.sessions().createLoginLink(config.console.owner_email);
  if (link) {
    std::printf(
        "tollgate: sign in to the console as %s (this link works once, for 15 minutes):\n"
        "%s/console/signin?token=%s\n",
        config.console.owner_email.c_str(), config::consoleOrigin(config).c_str(), link->c_str());
  }
}

/// A new store gets team `default` and one key, shown this once (and the console's first
/// owner); later starts say how to make another.
void bootstrap(store::Store& st, const config::Config& config, const StoreSetup& setup) {
  accounts::Accounts acc(st, setup.server_secret, {std::chrono::milliseconds(0)});
  const auto created = acc.bootstrap();
  const std::string where = setup.data_dir.empty() ? "" : " --data-dir '" + setup.data_dir + "'";
  if (!created) {
    std::printf(
        "tollgate: API keys are required; make one with: tollgate admin%s keys create "
        "--team default --name NAME\n",
        where.c_str());
    return;
  }
  std::printf(
      "tollgate: first start: created team \"default\" and an API key, shown only this once:\n"
      "export TOLLGATE_API_KEY=%s\n"
      "tollgate: try it:\n"
      "curl -s http://%s/v1/chat/completions -H \"Authorization: Bearer $TOLLGATE_API_KEY\" "
      "-H 'Content-Type: application/json' "
      "-d '{\"model\":\"echo\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}]}'\n",
      created->full.c_str(), config::listenAddress(config.gateway).c_str());
  bootstrapOwner(acc, config);
  std::fflush(stdout);
}

/// SIGHUP: reads the configuration file again and serves it to the requests that start from
/// now on, keeping what needs a restart (config::keepRestartOnly) and saying what was kept; a
/// file check-config refuses is refused with its message, the running configuration staying.
void reload(config::LiveConfig& live, routing::Breakers& breakers) {
  const std::shared_ptr<const config::Config> running = live.pin();
  if (running->source_file.empty()) {
    log::line(log::Level::Warn,
              "SIGHUP: serving the embedded default; there is no configuration file to reload");
    return;
  }
  config::Config next;
  try {
    next = config::loadConfigFile(running->source_file);
  } catch (const std::exception& e) {
    // check-config's message (a ConfigError), or what else stopped the read: never the end of
    // the gateway, whose signal loop this runs on.
    log::line(log::Level::Error,
              "reload refused, configuration " + running->hash + " stays: " + e.what());
    return;
  }
  for (const std::string& key : config::keepRestartOnly(next, *running)) {
    log::line(log::Level::Warn, "reload: " + key + " changed and needs a restart; kept as it was");
  }
  breakers.adopt(next);
  const std::string hash = next.hash;
  live.swap(std::make_shared<const config::Config>(std::move(next)));
  log::line(log::Level::Info, "reloaded configuration " + hash + " (was " + running->hash + ")");
}

/// Serves `live`'s configuration until SIGINT or SIGTERM, reloading it on SIGHUP; returns the
/// process exit code. Routes that need an API key ask `authenticator`; with none (open mode)
/// every route is public. Requests are billed through `ledger` (nullptr: nothing is billed), in
/// open mode to `open_team_id` if not empty; their Idempotency-Keys are claimed through `writer`
/// (set when `ledger` is). Nothing is served past `lease` (nullptr: no store
/// is followed, nothing to fence). Exchanges are recorded in `metrics`, served on GET /metrics
/// (on the console's listener when it has its own). Rate limits are counted by `limiter`.
int runGateway(config::LiveConfig& live, const StoreSetup& setup,
               const http::Authenticator* authenticator, billing::Ledger* ledger,
               store::StoreWork* writer, const std::string& open_team_id, cache::AnswerCache& cache,
               const std::string& gateway_id, const Lease* lease, limits::Limiter& limiter,
               telemetry::Metrics& metrics) {
  // What needs a restart (listeners, limits of the route table, the console) is read from the
  // configuration served first.
  const std::shared_ptr<const config::Config> first = live.pin();
  const config::Config& config = *first;
  routing::Breakers breakers(config);
  metrics.follow(cache);
  std::unique_ptr<accounts::AccountService> accounts;
  if (config.console.enabled) {
    try {
      accounts = std::make_unique<accounts::AccountService>(
          setup.location, setup.server_secret, accounts::PropagationPolicy{},
          accounts::SessionPolicy{config.console.session_idle, config.console.session_lifetime});
    } catch (const std::exception& e) {
      log::line(log::Level::Error, std::string("the console cannot use the store: ") + e.what());
      return 1;
    }
    metrics.follow(*accounts);
  }
  const auto router = [&](providers::Transport& network, http::OutboundHttp& outbound,
                          const std::atomic<bool>& draining, net::Listener listener) {
    const flow::Services services{config,       {network, providers::builtinAdapters(), breakers},
                                  outbound,     draining,
                                  ledger,       writer,
                                  open_team_id, cache,
                                  gateway_id,   lease,
                                  &limiter};
    // The console is served beside /v1, unless it has a listener of its own; so is /metrics.
    std::vector<http::Route> console;
    const bool own = config.console.ownListener();
    if (config.metrics.enabled && own == (listener == net::Listener::Console)) {
      console.push_back(telemetry::metricsRoute(metrics, breakers));
    }
    if (accounts && own == (listener == net::Listener::Console)) {
      console::addRoutes(console,
                         {config, *accounts, services,
                          std::make_shared<const auth::Sealer>(setup.server_secret, "oidc-login")});
    }
    if (listener == net::Listener::Console) {
      return api::makeProbedRouter(services, std::move(console));
    }
    return api::makeRouter(services, authenticator, std::move(console));
  };
  // Spans leave from a thread of their own, which ends after the workers.
  std::unique_ptr<telemetry::SpanExporter> spans;
  if (config.traces.endpoint) {
    spans = std::make_unique<telemetry::SpanExporter>(config.traces, net::makeOwnOutbound);
  }
  return net::serve(
      live, router, [&] { reload(live, breakers); },
      [&](exchange::Observers& observers) {
        if (config.metrics.enabled) {
          observers.add(metrics.addWorker());
        }
        if (spans != nullptr) {
          observers.add(*spans);
        }
      });
}

}  // namespace

int serve(const config::Config& config, const StoreSetup& setup) {
  log::useJson(config.log.format == config::LogFormat::Json);
  const bool required = config.gateway.auth == config::AuthMode::Required;
  std::string open_team_id;
  try {
    store::Store st(store::connect(setup.location));
    for (const std::string& line : store::migrate(st.connection()).look_alikes) {
      log::line(log::Level::Warn, "a name kept from before look-alikes were refused: " + line);
    }
    if (required) {
      bootstrap(st, config, setup);
    }
    if (!config.gateway.open_team.empty()) {
      const auto team = st.findTeam(config.gateway.open_team);
      if (!team) {
        log::line(log::Level::Error, "[gateway] open_team \"" + config.gateway.open_team +
                                         "\" is not a team; create it with: tollgate admin teams "
                                         "create NAME --balance USD");
        return 1;
      }
      open_team_id = team->id;
    }
  } catch (const std::exception& e) {
    log::line(log::Level::Error, std::string("the store cannot be used: ") + e.what());
    return 1;
  }
  const cache::AnswerCache::Options cache_options{config.cache.memory_bytes,
                                                  config.cache.team_max_bytes,
                                                  config.cache.retention_seconds * kMsPerSecond};
  if (!required && open_team_id.empty()) {
    // Nothing to check, nothing to bill: the cache is the memory's alone.
    if (config.alerts.webhook_url) {
      log::line(log::Level::Warn,
                "[alerts] sends nothing: no balance is debited in open mode "
                "without [gateway] open_team");
    }
    cache::AnswerCache cache(cache_options, nullptr);
    config::LiveConfig live(config);
    telemetry::Metrics metrics(config);
    limits::Limiter limiter(nullptr, "", nullptr);  // This gateway's counts alone.
    return runGateway(live, setup, nullptr, nullptr, nullptr, "", cache, "", nullptr, limiter,
                      metrics);
  }
  // The follower registers this gateway (the ledger's holds are reclaimed when it dies), so it
  // starts first and stops last.
  const std::string gateway_id = ids::uuidV7();
  auth::KeyDirectory keys;
  Lease lease(config.gateway.lease);
  std::unique_ptr<auth::KeyFollower> follower;
  // The store's writer runs the ledger's charges and the cache's writes: it is made before both.
  // The ledger ends first, its queue committed; then the writer, running what the cache posted
  // to it before it stops; then the cache.
  std::unique_ptr<cache::AnswerCache> cache;
  telemetry::Metrics metrics(config);  // Told of the ledger's commits: outlives the ledger.
  std::unique_ptr<store::Writer> writer;
  std::unique_ptr<billing::Ledger> ledger;
  std::unique_ptr<limits::Limiter> limiter;  // Leaves the writer before it stops.
  // Sends the outbox through the writer: it stops before the ledger and the writer.
  std::unique_ptr<alerts::WebhookSender> webhook;
  try {
    follower = std::make_unique<auth::KeyFollower>(
        setup.location, keys, gateway_id, accounts::rolesAllowed(accounts::Action::CreateKey),
        lease);
    writer = std::make_unique<store::Writer>(
        setup.location,
        store::Writer::Retention{
            config.storage.spend_retention_days, config.storage.audit_retention_days,
            config.cache.retention_seconds * kMsPerSecond,
            config.cache.idempotency_window_seconds * kMsPerSecond, store::kAlertRetentionDays});
    ledger = std::make_unique<billing::Ledger>(*writer, gateway_id, lease);
    if (config.metrics.enabled) {
      metrics.follow(*ledger);
    }
    if (config.alerts.webhook_url) {
      ledger->alertBelow(config.alerts.balance_below);
      ledger->alertKeyBudgets(config.alerts.key_budget_ppm);
      webhook = std::make_unique<alerts::WebhookSender>(config.alerts, *writer, gateway_id,
                                                        net::makeOwnOutbound);
      // Only the host: the URL may carry the receiver's token.
      log::line(log::Level::Info, "alerts are sent to " + config.alerts.webhook_url->host);
    }
    cache = std::make_unique<cache::AnswerCache>(cache_options, writer.get());
    limiter = std::make_unique<limits::Limiter>(writer.get(), gateway_id, &lease);
  } catch (const std::exception& e) {
    log::line(log::Level::Error, std::string("the store cannot be followed: ") + e.what());
    return 1;
  }
  const auth::KeyAuthenticator authenticator(keys, setup.server_secret, &lease);
  config::LiveConfig live(config);
  return runGateway(live, setup, required ? &authenticator : nullptr, ledger.get(), writer.get(),
                    open_team_id, *cache, gateway_id, &lease, *limiter, metrics);
}

}  // namespace tollgate::cli
