#include "api/gateway.hpp"

#include "api/routes.hpp"
#include "net/server.hpp"
#include "providers/adapter.hpp"
#include "providers/secret_redactor.hpp"
#include "routing/breaker.hpp"

namespace tollgate::api {

int runGateway(const config::Config& config, const http::Authenticator* authenticator,
               billing::Ledger* ledger, const std::string& open_team_id) {
  const providers::SecretRedactor redactor(config);
  const routing::Breakers breakers(config);
  return net::serve(config, [&](providers::Transport& network, const std::atomic<bool>& draining) {
    return makeRouter(Services{config,
                               {network, providers::builtinAdapters(), redactor, breakers},
                               draining,
                               ledger,
                               open_team_id},
                      authenticator);
  });
}

}  // namespace tollgate::api
