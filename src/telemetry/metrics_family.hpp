// Building prometheus-cpp's MetricFamily values (what its TextSerializer writes) from the sums
// the metrics keep: shared by the exchange metrics and the money counters.
#pragma once

#include <prometheus/metric_family.h>

#include <string>
#include <utility>
#include <vector>

#include "telemetry/metrics_cells.hpp"

namespace tollgate::telemetry {

using LabelList = std::vector<std::pair<std::string, std::string>>;

/// An empty family of `type`.
prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type);
/// Adds a counter's (or gauge's) sample.
void addValue(prometheus::MetricFamily& f, const LabelList& labels, double value);
/// Adds a histogram's sample: cumulative buckets over `bounds`, their count and sum.
void addHistogram(prometheus::MetricFamily& f, const LabelList& labels,
                  std::span<const double> bounds, const HistogramSum& h);

}  // namespace tollgate::telemetry
