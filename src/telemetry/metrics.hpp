// The gateway's Prometheus metrics (docs/operating.md): an exchange observer per worker thread
// recording each exchange's final record into cells of its own (no lock shared between workers,
// no allocation once a series is known), the money the ledger committed, and the text format
// of all of them, summed over the workers when scraped (prometheus-cpp's TextSerializer).
// Label values come from the configuration or closed sets only, never from a client or upstream.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accounts/account_service.hpp"
#include "cache/answer_cache.hpp"
#include "exchange/observer.hpp"
#include "routing/breaker.hpp"
#include "telemetry/money_counters.hpp"

namespace tollgate::telemetry {

class WorkerMetrics;

class Metrics {
 public:
  /// Money counters labelled as `config`'s [metrics] says.
  explicit Metrics(const config::Config& config);
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  /// Shows the console's sign-ins as `accounts` (which outlives the scrapes) counts them.
  void follow(const accounts::AccountService& accounts) { accounts_ = &accounts; }
  /// Shows what the inference cache's memory holds (`cache` outlives the scrapes).
  void follow(const cache::AnswerCache& cache) { cache_ = &cache; }
  /// A new worker's observer, kept as long as this: each worker thread records into its own.
  exchange::Observer& addWorker();
  /// Counts what `ledger` (which outlives the scrapes) commits, and shows its holds in flight.
  void follow(billing::Ledger& ledger);
  /// Every family in the Prometheus text format (version 0.0.4), with the state of each of
  /// `config`'s providers' breakers in `breakers`.
  std::string scrape(const config::Config& config, const routing::Breakers& breakers) const;

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<WorkerMetrics>> workers_;  ///< mu_.
  const billing::Ledger* ledger_ = nullptr;              ///< None: nothing is billed.
  const accounts::AccountService* accounts_ = nullptr;   ///< None: no console.
  const cache::AnswerCache* cache_ = nullptr;
  MoneyCounters money_;
};

}  // namespace tollgate::telemetry
