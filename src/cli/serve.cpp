#include "cli/serve.hpp"

#include <cstdio>
#include <memory>

#include "accounts/accounts.hpp"
#include "api/gateway.hpp"
#include "auth/authenticator.hpp"
#include "auth/key_follower.hpp"
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

}  // namespace

int serve(const config::Config& config, const StoreSetup& setup) {
  try {
    store::Store st(store::connect(setup.location));
    store::migrate(st.connection());
    if (config.gateway.auth == config::AuthMode::Required) {
      bootstrap(st, config, setup);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: the store cannot be used: %s\n", e.what());
    return 1;
  }
  if (config.gateway.auth == config::AuthMode::Open) {
    return api::runGateway(config, nullptr);
  }
  auth::KeyDirectory keys;
  std::unique_ptr<auth::KeyFollower> follower;
  try {
    follower = std::make_unique<auth::KeyFollower>(setup.location, keys);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tollgate: the store cannot be followed: %s\n", e.what());
    return 1;
  }
  const auth::KeyAuthenticator authenticator(keys, setup.server_secret);
  return api::runGateway(config, &authenticator);
}

}  // namespace tollgate::cli
