#include "cli/admin_output.hpp"

#include <cstdio>

#include "core/json.hpp"
#include "core/text.hpp"
#include "core/unicode.hpp"

namespace tollgate::cli::admin {

std::string shown(const std::string& s) { return unicode::visible(s); }

void printJson(json::Writer& w) { std::printf("%s\n", w.take().c_str()); }

void reportLagging(const accounts::Propagation& p) {
  for (const store::GatewayRecord& g : p.lagging) {
    std::fprintf(stderr,
                 "warning: gateway %s (host %s, pid %lld, last seen %s) is fenced, not confirmed: "
                 "silent past its lease, it serves nothing until it has applied the change\n",
                 g.id.c_str(), shown(g.host).c_str(), static_cast<long long>(g.pid),
                 text::utcTimestamp(g.seen_at).c_str());
  }
}

}  // namespace tollgate::cli::admin
