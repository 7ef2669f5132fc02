#include "telemetry/metrics_family.hpp"

#include <limits>

namespace tollgate::telemetry {
namespace {

std::vector<prometheus::ClientMetric::Label> labelsOf(const LabelList& labels) {
  std::vector<prometheus::ClientMetric::Label> out;
  out.reserve(labels.size());
  for (const auto& [name, value] : labels) {
    out.push_back({name, value});
  }
  return out;
}

}  // namespace

prometheus::MetricFamily family(std::string name, std::string help, prometheus::MetricType type) {
  return prometheus::MetricFamily{std::move(name), std::move(help), type, {}};
}

void addValue(prometheus::MetricFamily& f, const LabelList& labels, double value) {
  prometheus::ClientMetric m;
  m.label = labelsOf(labels);
  if (f.type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(std::move(m));
}

void addHistogram(prometheus::MetricFamily& f, const LabelList& labels,
                  std::span<const double> bounds, const HistogramSum& h) {
  prometheus::ClientMetric m;
  m.label = labelsOf(labels);
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < h.counts.size(); ++i) {
    cumulative += h.counts[i];
    const double bound = i < bounds.size() ? bounds[i] : std::numeric_limits<double>::infinity();
    m.histogram.bucket.push_back({cumulative, bound});
  }
  m.histogram.sample_count = cumulative;
  m.histogram.sample_sum = h.sum;
  f.metric.push_back(std::move(m));
}

}  // namespace tollgate::telemetry
