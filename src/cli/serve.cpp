#include "cli/serve.hpp"

#include <cstdio>
#include <memory>

#include "accounts/accounts.hpp"
#include "api/routes.hpp"
#include "auth/key_authenticator.hpp"
#include "auth/key_follower.hpp"
#include "billing/ledger.hpp"
#include "core/ids.hpp"
#include "net/server.hpp"
#include "providers/adapter.hpp"
#include "providers/secret_redactor.hpp"
#include "routing/breaker.hpp"
#include "store/migrations.hpp"

namespace tollgate::cli {
namespace {

std::string listenAddress(const config::Gateway& g) {
  const bool v6 = g.host.find(':') != std::string::npos;
  return (v6 ? "[" + g.host + "]" : g.host) + ":" + std::to_string(g.port);
}

/// A new store gets team `default` and one key, shown this once; later starts say how to make
/// another.
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
      created->full.c_str(), listenAddress(config.gateway).c_str());
  std::fflush(stdout);
}

/// Serves `config` until SIGINT or SIGTERM; returns the process exit code. Routes that need an
/// API key ask `authenticator`; with none (open mode) every route is public. Requests are billed
/// through `ledger` (nullptr: nothing is billed), in open mode to `open_team_id` if not empty.
int runGateway(const config::Config& config, const http::Authenticator* authenticator,
               billing::Ledger* ledger, const std::string& open_team_id) {
  const providers::SecretRedactor redactor(config);
  const routing::Breakers breakers(config);
  return net::serve(config, [&](providers::Transport& network, http::OutboundHttp& outbound,
                                const std::atomic<bool>& draining) {
    return api::makeRouter(
        api::Services{config,
                      {network, providers::builtinAdapters(), redactor, breakers},
                      outbound,
                      draining,
                      ledger,
                      open_team_id},
        authenticator);
  });
}

}  // namespace

int serve(const config::Config& config, const StoreSetup& setup) {
  const bool required = config.gateway.auth == config::AuthMode::Required;
  std::string open_team_id;
  try {
    store::Store st(store::connect(setup.location));
    store::migrate(st.connection());
    if (required) {
      bootstrap(st, config, setup);
    }
    if (!config.gateway.open_team.empty()) {
      const auto team = st.findTeam(config.gateway.open_team);
      if (!team) {
        std::fprintf(stderr,
                     "tollgate: [gateway] open_team \"%s\" is not a team; create it with: "
                     "tollgate admin teams create NAME --balance USD\n",
                     config.gateway.open_team.c_str());
        return 1;
      }
      open_team_id = team->id;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: the store cannot be used: %s\n", e.what());
    return 1;
  }
  if (!required && open_team_id.empty()) {
    return runGateway(config, nullptr, nullptr, "");  // Nothing to check, nothing to bill.
  }
  // The follower registers this gateway (the ledger's holds are reclaimed when it dies), so it
  // starts first and stops last.
  const std::string gateway_id = ids::uuidV7();
  auth::KeyDirectory keys;
  store::Liveness liveness;
  std::unique_ptr<auth::KeyFollower> follower;
  std::unique_ptr<billing::Ledger> ledger;
  try {
    follower = std::make_unique<auth::KeyFollower>(
        setup.location, keys, gateway_id, accounts::rolesAllowed(accounts::Action::CreateKey),
        liveness);
    ledger = std::make_unique<billing::Ledger>(
        setup.location, billing::Ledger::Options{gateway_id, config.storage.spend_retention_days},
        liveness);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: the store cannot be followed: %s\n", e.what());
    return 1;
  }
  const auth::KeyAuthenticator authenticator(keys, setup.server_secret);
  return runGateway(config, required ? &authenticator : nullptr, ledger.get(), open_team_id);
}

}  // namespace tollgate::cli
