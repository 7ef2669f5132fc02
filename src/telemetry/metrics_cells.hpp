// The cells metrics are recorded in: one thread adds to a cell, any thread reads it (a scrape).
// With a single writer an addition is a plain load and store, no locked instruction and no
// mutex, which is why they are not prometheus-cpp's (its Histogram takes a mutex per
// observation); each worker thread has cells of its own, summed when scraped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tollgate::telemetry {

/// A count that one thread adds to and any thread reads.
class Tally {
 public:
  void add(std::uint64_t n = 1) {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  std::uint64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::uint64_t> value_{0};
};

/// A level (a gauge) that one thread moves and any thread reads.
class Level {
 public:
  void add(std::int64_t delta) {
    value_.store(value_.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  std::int64_t get() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<std::int64_t> value_{0};
};

/// Buckets summed over every cell of one series, when scraped.
struct HistogramSum {
  std::vector<std::uint64_t> counts;  ///< Per bucket, not cumulative; the last one is +Inf.
  double sum = 0;
};

/// A histogram over fixed upper bounds (static, ascending), which one thread observes into.
class HistogramCell {
 public:
  explicit HistogramCell(std::span<const double> bounds)
      : bounds_(bounds), counts_(std::make_unique<Tally[]>(bounds.size() + 1)) {}

  void observe(double v) {
    std::size_t i = 0;
    while (i < bounds_.size() && v > bounds_[i]) {
      ++i;
    }
    counts_[i].add();
    sum_.store(sum_.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  }
  std::span<const double> bounds() const { return bounds_; }
  /// Adds this cell's counts and sum to `out` (sized on first use).
  void addTo(HistogramSum& out) const {
    out.counts.resize(bounds_.size() + 1);
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
      out.counts[i] += counts_[i].get();
    }
    out.sum += sum_.load(std::memory_order_relaxed);
  }

 private:
  std::span<const double> bounds_;
  std::unique_ptr<Tally[]> counts_;
  std::atomic<double> sum_{0};
};

}  // namespace tollgate::telemetry
