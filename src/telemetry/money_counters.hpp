// The money the metrics expose, as the ledger committed it: each spend row's cost (what was
// debited) and uncollected amount, added once its batch's commit succeeded, from the row as
// written, summed as exact integers of pico-USD per series and turned into USD only when
// scraped; and the ledger's batch sizes and commit times.
#pragma once

#include <prometheus/metric_family.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "billing/ledger.hpp"
#include "telemetry/metrics_cells.hpp"

namespace tollgate::telemetry {

/// `pico` pico-USD in USD: the double nearest the exact quotient (no error accumulated).
double usdFromPico(__int128 pico);

class MoneyCounters final : public billing::CommitListener {
 public:
  struct Labels {
    bool team_labels = false;     ///< Whether series carry the team's name.
    std::size_t max_teams = 100;  ///< Teams named; later ones are counted as `other`.
    std::string open_team;        ///< The team of rows without a caller's team (open mode).
  };
  explicit MoneyCounters(Labels labels);

  /// The writer's thread, after a commit.
  void spent(const store::SpendRow& row) override;
  void batch(std::size_t operations, std::chrono::microseconds took) override;

  /// tollgate_cost_usd_total, tollgate_uncollected_usd_total, the ledger's batch size and commit
  /// time.
  std::vector<prometheus::MetricFamily> collect() const;

 private:
  struct Sums {
    __int128 cost = 0;
    __int128 uncollected = 0;
  };
  const std::string& teamLabel(const std::string& team);

  Labels labels_;
  mutable std::mutex mu_;
  /// By model, then team (one series when without team labels); mu_. Found without building a
  /// key: a known series costs no allocation.
  std::map<std::string, std::map<std::string, Sums, std::less<>>, std::less<>> sums_;
  std::set<std::string> teams_;     ///< Teams named; mu_.
  HistogramCell batch_operations_;  ///< Observed under mu_.
  HistogramCell commit_seconds_;    ///< Observed under mu_.
};

}  // namespace tollgate::telemetry
