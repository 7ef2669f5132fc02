#include "cli/admin_output.hpp"

#include <cstdio>

#include "core/json.hpp"
#include "core/unicode.hpp"

namespace tollgate::cli::admin {

std::string shown(const std::string& s) { return unicode::visible(s); }

void printJson(json::Writer& w) { std::printf("%s\n", w.take().c_str()); }

void reportLagging(const accounts::Propagation& p) {
  for (const store::GatewayRecord& g : p.lagging) {
    std::fprintf(stderr,
                 "warning: gateway %s (host %s, pid %lld) did not confirm the change in time; it "
                 "applies it when it reaches the store again\n",
                 g.id.c_str(), shown(g.host).c_str(), static_cast<long long>(g.pid));
  }
}

}  // namespace tollgate::cli::admin
