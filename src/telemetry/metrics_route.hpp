// GET /metrics: the metrics in the Prometheus text format, to a caller mayScrape allows; anyone
// else gets the 404 of a path no route serves.
#pragma once

#include "http/router.hpp"
#include "routing/breaker.hpp"
#include "telemetry/metrics.hpp"

namespace tollgate::telemetry {

/// The route, over `metrics` and the `breakers` whose states it shows (both outlive it).
http::Route metricsRoute(const Metrics& metrics, const routing::Breakers& breakers);

}  // namespace tollgate::telemetry
