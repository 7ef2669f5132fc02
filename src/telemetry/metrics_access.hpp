// Who may read GET /metrics: a source in [metrics] allow, or a request bearing [metrics] token.
#pragma once

#include <string_view>

#include "config/config.hpp"

namespace tollgate::telemetry {

/// Whether a request from `source` (the request's source, behind trusted proxies) with the
/// Authorization header `authorization` may read the metrics under `m`. The token is compared in
/// constant time; a source that is not an address is allowed only with the token.
bool mayScrape(const config::Metrics& m, std::string_view source, std::string_view authorization);

}  // namespace tollgate::telemetry
