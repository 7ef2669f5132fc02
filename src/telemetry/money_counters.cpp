#include "telemetry/money_counters.hpp"

#include <array>
#include <cstdlib>

#include "telemetry/metrics_family.hpp"

namespace tollgate::telemetry {
namespace {

constexpr int kPicoDigits = 12;
constexpr double kMicrosPerSecond = 1e6;
/// Operations per ledger commit.
constexpr std::array<double, 10> kBatchBounds{1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
/// A commit's transaction, in seconds: 100 µs to 10 s.
constexpr std::array<double, 14> kCommitBounds{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                               0.025,  0.05,    0.1,    0.25,  0.5,    1,     10};
const std::string kOther = "other";
const std::string kNone = "none";

}  // namespace

double usdFromPico(__int128 pico) {
  // As decimal text, which strtod rounds correctly: the double nearest the exact amount.
  const bool negative = pico < 0;
  unsigned __int128 magnitude = negative ? static_cast<unsigned __int128>(-(pico + 1)) + 1
                                         : static_cast<unsigned __int128>(pico);
  std::array<char, 48> digits{};
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  while (n <= kPicoDigits) {
    digits[n++] = '0';
  }
  std::string text = negative ? "-" : "";
  for (std::size_t i = n; i-- > 0;) {
    text.push_back(digits[i]);
    if (i == kPicoDigits) {
      text.push_back('.');
    }
  }
  return std::strtod(text.c_str(), nullptr);
}

MoneyCounters::MoneyCounters(Labels labels)
    : labels_(std::move(labels)), batch_operations_(kBatchBounds), commit_seconds_(kCommitBounds) {}

const std::string& MoneyCounters::teamLabel(const std::string& team) {
  const std::string& name =
      team.empty() ? (labels_.open_team.empty() ? kNone : labels_.open_team) : team;
  if (teams_.contains(name)) {
    return name;
  }
  if (teams_.size() >= labels_.max_teams) {
    return kOther;
  }
  return *teams_.insert(name).first;
}

void MoneyCounters::spent(const store::SpendRow& row) {
  std::lock_guard lock(mu_);
  const std::string& team = labels_.team_labels ? teamLabel(row.team) : kNone;
  auto model = sums_.find(row.model);
  if (model == sums_.end()) {
    model = sums_.emplace(row.model, std::map<std::string, Sums, std::less<>>{}).first;
  }
  auto series = model->second.find(team);
  if (series == model->second.end()) {
    series = model->second.emplace(team, Sums{}).first;
  }
  Sums& s = series->second;
  s.cost += row.cost;
  s.uncollected += row.uncollected;
}

void MoneyCounters::batch(std::size_t operations, std::chrono::microseconds took) {
  std::lock_guard lock(mu_);
  batch_operations_.observe(static_cast<double>(operations));
  commit_seconds_.observe(static_cast<double>(took.count()) / kMicrosPerSecond);
}

std::vector<prometheus::MetricFamily> MoneyCounters::collect() const {
  using prometheus::MetricType;
  auto cost = family("tollgate_cost_usd_total",
                     "What teams were charged (the spend rows' cost), in USD, once committed",
                     MetricType::Counter);
  auto uncollected =
      family("tollgate_uncollected_usd_total",
             "Priced usage the balance could not cover (the spend rows' uncollected), in USD",
             MetricType::Counter);
  auto batch =
      family("tollgate_ledger_batch_operations",
             "Operations (holds and settlements) per ledger commit", MetricType::Histogram);
  auto commit = family("tollgate_ledger_commit_duration_seconds",
                       "How long a ledger batch's transaction took", MetricType::Histogram);
  std::lock_guard lock(mu_);
  for (const auto& [model, teams] : sums_) {
    for (const auto& [team, sums] : teams) {
      LabelList labels{{"model", model}};
      if (labels_.team_labels) {
        labels.emplace_back("team", team);
      }
      addValue(cost, labels, usdFromPico(sums.cost));
      addValue(uncollected, labels, usdFromPico(sums.uncollected));
    }
  }
  HistogramSum sizes;
  batch_operations_.addTo(sizes);
  addHistogram(batch, {}, batch_operations_.bounds(), sizes);
  HistogramSum times;
  commit_seconds_.addTo(times);
  addHistogram(commit, {}, commit_seconds_.bounds(), times);
  std::vector<prometheus::MetricFamily> out;
  out.push_back(std::move(cost));
  out.push_back(std::move(uncollected));
  out.push_back(std::move(batch));
  out.push_back(std::move(commit));
  return out;
}

}  // namespace tollgate::telemetry
