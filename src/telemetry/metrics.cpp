#include "telemetry/metrics.hpp"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <sstream>
#include <unordered_map>

#include "core/build_info.hpp"
#include "telemetry/gen_ai_names.hpp"
#include "telemetry/metrics_family.hpp"

namespace tollgate::telemetry {
namespace {

using Micros = std::chrono::microseconds;
constexpr double kMicrosPerSecond = 1e6;

// Bucket boundaries. The GenAI conventions' advised ones for durations, extended to 600 s (a
// long stream), and for time to first token and token counts; the gateway's own overhead from
// 50 µs to 100 ms.
constexpr std::array<double, 17> kDurationBounds{0.01,  0.02,  0.04,   0.08,   0.16,  0.32,
                                                 0.64,  1.28,  2.56,   5.12,   10.24, 20.48,
                                                 40.96, 81.92, 163.84, 327.68, 600};
constexpr std::array<double, 16> kFirstTokenBounds{
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0};
constexpr std::array<double, 14> kTokenBounds{
    1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864};
constexpr std::array<double, 11> kOverheadBounds{50e-6, 100e-6, 250e-6, 500e-6, 1e-3,  2.5e-3,
                                                 5e-3,  10e-3,  25e-3,  50e-3,  100e-3};

constexpr std::array<std::string_view, 5> kStatusClasses{"1xx", "2xx", "3xx", "4xx", "5xx"};
constexpr std::array<std::string_view, 3> kCacheOutcomes{"hit", "miss", "partial"};
constexpr std::array<std::string_view, 4> kKeyOutcomes{"claimed", "replayed", "not_kept",
                                                       "conflict"};
constexpr std::array<routing::CircuitBreaker::State, 3> kBreakerStates{
    routing::CircuitBreaker::State::Closed, routing::CircuitBreaker::State::Open,
    routing::CircuitBreaker::State::HalfOpen};

// An outcome's index is its enumerator's, less None's.
static_assert(static_cast<std::size_t>(exchange::CacheOutcome::Partial) == kCacheOutcomes.size());
static_assert(static_cast<std::size_t>(exchange::KeyOutcome::Conflict) == kKeyOutcomes.size());

double seconds(Micros us) { return static_cast<double>(us.count()) / kMicrosPerSecond; }

std::size_t statusClass(int status) {
  constexpr int kClassWidth = 100;
  const int c = status / kClassWidth;
  const auto classes = static_cast<int>(kStatusClasses.size());
  return c >= 1 && c <= classes ? static_cast<std::size_t>(c - 1) : kStatusClasses.size() - 1;
}

/// A series' label values, looked up without building a string (owned once inserted).
template <std::size_t N>
using KeyView = std::array<std::string_view, N>;
template <std::size_t N>
using Key = std::array<std::string, N>;

struct KeyHash {
  using is_transparent = void;
  template <std::size_t N>
  std::size_t operator()(const KeyView<N>& k) const {
    std::size_t h = 0;
    for (const std::string_view part : k) {
      constexpr std::size_t kMix = 0x9e3779b97f4a7c15ULL;
      h ^= std::hash<std::string_view>{}(part) + kMix + (h << 6) + (h >> 2);
    }
    return h;
  }
  template <std::size_t N>
  std::size_t operator()(const Key<N>& k) const {
    return (*this)(view(k));
  }
  template <std::size_t N>
  static KeyView<N> view(const Key<N>& k) {
    KeyView<N> v;
    std::copy(k.begin(), k.end(), v.begin());
    return v;
  }
  template <std::size_t N>
  static KeyView<N> view(const KeyView<N>& k) {
    return k;
  }
};

struct KeyEqual {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return KeyHash::view(a) == KeyHash::view(b);
  }
};

/// One worker's series of `T` by N label values: the worker finds and adds without a lock; it
/// takes `mu` to add a series, which a scrape holds while it reads them.
template <typename T, std::size_t N>
class Series {
 public:
  template <typename... Args>
  T& find(std::mutex& mu, const KeyView<N>& key, Args&&... args) {
    // A request mostly counts in the series the one before it did: its labels are compared with
    // those before they are hashed (a node of the map stays where it is while the map lives).
    if (last_ != nullptr && KeyHash::view(last_->first) == key) {
      return *last_->second;
    }
    auto it = map_.find(key);
    if (it == map_.end()) {
      Key<N> owned;
      std::copy(key.begin(), key.end(), owned.begin());
      std::lock_guard lock(mu);
      it = map_.emplace(std::move(owned), std::make_unique<T>(std::forward<Args>(args)...)).first;
    }
    last_ = &*it;
    return *it->second;
  }
  /// Under the worker's mutex.
  template <typename F>
  void each(F&& f) const {
    for (const auto& [key, value] : map_) {
      f(key, *value);
    }
  }

 private:
  using Map = std::unordered_map<Key<N>, std::unique_ptr<T>, KeyHash, KeyEqual>;
  Map map_;
  const typename Map::value_type* last_ = nullptr;  ///< The series found last.
};

/// By route, model, provider and error code: an exchange's counts and times.
struct ExchangeCells {
  explicit ExchangeCells(std::string_view op) : operation(op) {}
  std::string_view operation;  ///< Empty for an exchange no configured model served.
  std::array<Tally, kStatusClasses.size()> by_class;
  HistogramCell duration{kDurationBounds};
  HistogramCell first_token{kFirstTokenBounds};
  HistogramCell overhead{kOverheadBounds};
  HistogramCell input_tokens{kTokenBounds};
  HistogramCell output_tokens{kTokenBounds};
};

/// By model, provider and error code: upstream attempts and their times.
struct AttemptCells {
  explicit AttemptCells(std::string_view op) : operation(op) {}
  std::string_view operation;
  Tally count;
  Tally retries;  ///< Attempts after their exchange's first: retries and fallbacks.
  HistogramCell duration{kDurationBounds};
};

/// Histogram sums and counts of one scrape, by label set.
template <typename T>
using ByLabels = std::map<LabelList, T>;

/// What one scrape gathers from every worker, by label set.
struct Gathered {
  ByLabels<std::uint64_t> requests;
  ByLabels<HistogramSum> duration;
  ByLabels<HistogramSum> first_token;
  ByLabels<HistogramSum> tokens;
  ByLabels<HistogramSum> overhead;
  ByLabels<HistogramSum> operation;
  ByLabels<std::uint64_t> attempts;
  ByLabels<std::uint64_t> retries;
  ByLabels<std::uint64_t> failures;
  std::array<std::uint64_t, kCacheOutcomes.size()> cache{};
  std::uint64_t cache_bytes = 0;
  std::array<std::uint64_t, kKeyOutcomes.size()> keys{};
  std::int64_t connections = 0;
  std::int64_t streams = 0;
};

LabelList genAi(std::string_view op, std::string_view model, std::string_view provider) {
  return {{"gen_ai_operation_name", std::string(op)},
          {"gen_ai_provider_name", std::string(provider)},
          {"gen_ai_request_model", std::string(model)}};
}

LabelList withError(LabelList labels, std::string_view error) {
  if (!error.empty()) {
    labels.emplace_back("error_type", std::string(error));
  }
  return labels;
}

void addHistograms(prometheus::MetricFamily& f, std::span<const double> bounds,
                   const ByLabels<HistogramSum>& sums) {
  for (const auto& [labels, sum] : sums) {
    addHistogram(f, labels, bounds, sum);
  }
}

void addValues(prometheus::MetricFamily& f, const ByLabels<std::uint64_t>& values) {
  for (const auto& [labels, value] : values) {
    addValue(f, labels, static_cast<double>(value));
  }
}

}  // namespace

class WorkerMetrics final : public exchange::Observer {
 public:
  void ended(const exchange::RequestContext& ctx) override;
  void connections(int delta) override { connections_.add(delta); }
  void streams(int delta) override { streams_.add(delta); }
  /// Adds this worker's cells to `g`; under `mu`.
  void gather(Gathered& g) const;

  mutable std::mutex mu;

 private:
  Series<ExchangeCells, 4> exchanges_;
  Series<AttemptCells, 3> attempts_;
  std::array<Tally, kCacheOutcomes.size()> cache_;
  Tally cache_bytes_;  ///< Bytes sent to clients in answers from the cache.
  std::array<Tally, kKeyOutcomes.size()> keys_;
  Level connections_;
  Level streams_;
};

void WorkerMetrics::ended(const exchange::RequestContext& ctx) {
  const Micros total = ctx.since(exchange::RequestContext::Clock::now());
  const std::string_view model =
      ctx.served != nullptr ? std::string_view(ctx.served->id) : std::string_view("unknown");
  const std::string_view provider =
      ctx.provider.empty() ? std::string_view("none") : std::string_view(ctx.provider);
  const std::string_view route = ctx.route.empty() ? "unmatched" : ctx.route;
  const std::string_view op =
      ctx.served != nullptr ? genAiOperation(ctx.served->endpoint) : std::string_view{};
  ExchangeCells& e = exchanges_.find(mu, {route, model, provider, ctx.error_code}, op);
  e.by_class[statusClass(ctx.status)].add();
  e.overhead.observe(seconds(std::max(total - ctx.upstream, Micros(0))));
  if (ctx.served != nullptr) {
    e.duration.observe(seconds(total));
    if (!ctx.attempt_log.empty() && ctx.attempt_log.back().first_byte > Micros(0) &&
        ctx.error_code.empty()) {
      e.first_token.observe(seconds(ctx.attempt_log.back().first_byte));
    }
    if (ctx.usage.prompt_tokens > 0) {
      e.input_tokens.observe(static_cast<double>(ctx.usage.prompt_tokens));
    }
    if (ctx.usage.completion_tokens > 0) {
      e.output_tokens.observe(static_cast<double>(ctx.usage.completion_tokens));
    }
  }
  for (const exchange::AttemptRecord& a : ctx.attempt_log) {
    AttemptCells& cells = attempts_.find(mu, {model, a.provider, a.error_code}, op);
    cells.count.add();
    if (&a != &ctx.attempt_log.front()) {
      cells.retries.add();
    }
    cells.duration.observe(seconds(std::max(a.ended - a.started, Micros(0))));
  }
  if (ctx.cache != exchange::CacheOutcome::None) {
    cache_[static_cast<std::size_t>(ctx.cache) - 1].add();
  }
  if (ctx.cache == exchange::CacheOutcome::Hit) {
    cache_bytes_.add(ctx.bytes_out);
  }
  if (ctx.idempotency != exchange::KeyOutcome::None) {
    keys_[static_cast<std::size_t>(ctx.idempotency) - 1].add();
  }
}

void WorkerMetrics::gather(Gathered& g) const {
  exchanges_.each([&](const Key<4>& k, const ExchangeCells& e) {
    const auto& [route, model, provider, error] = k;
    for (std::size_t c = 0; c < kStatusClasses.size(); ++c) {
      if (const std::uint64_t n = e.by_class[c].get(); n > 0) {
        g.requests[{{"model", model},
                    {"provider", provider},
                    {"route", route},
                    {"status_class", std::string(kStatusClasses[c])}}] += n;
      }
    }
    e.overhead.addTo(g.overhead[{{"route", route}}]);
    if (e.operation.empty()) {
      return;
    }
    const LabelList labels = genAi(e.operation, model, provider);
    e.duration.addTo(g.duration[withError(labels, error)]);
    if (error.empty()) {
      e.first_token.addTo(g.first_token[labels]);
    }
    LabelList input = labels;
    input.emplace_back("gen_ai_token_type", "input");
    e.input_tokens.addTo(g.tokens[input]);
    LabelList output = labels;
    output.emplace_back("gen_ai_token_type", "output");
    e.output_tokens.addTo(g.tokens[output]);
  });
  attempts_.each([&](const Key<3>& k, const AttemptCells& a) {
    const auto& [model, provider, error] = k;
    const std::uint64_t n = a.count.get();
    g.attempts[{{"model", model}, {"provider", provider}}] += n;
    g.retries[{{"model", model}, {"provider", provider}}] += a.retries.get();
    if (!error.empty()) {
      g.failures[{{"error", error}, {"model", model}, {"provider", provider}}] += n;
    }
    if (!a.operation.empty()) {
      a.duration.addTo(g.operation[withError(genAi(a.operation, model, provider), error)]);
    }
  });
  for (std::size_t i = 0; i < cache_.size(); ++i) {
    g.cache[i] += cache_[i].get();
  }
  g.cache_bytes += cache_bytes_.get();
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    g.keys[i] += keys_[i].get();
  }
  g.connections += connections_.get();
  g.streams += streams_.get();
}

Metrics::Metrics(const config::Config& config)
    : money_({config.metrics.team_labels, static_cast<std::size_t>(config.metrics.max_teams),
              config.gateway.open_team}) {}

Metrics::~Metrics() = default;

void Metrics::follow(billing::Ledger& ledger) {
  ledger.listen(money_);
  ledger_ = &ledger;
}

exchange::Observer& Metrics::addWorker() {
  std::lock_guard lock(mu_);
  return *workers_.emplace_back(std::make_unique<WorkerMetrics>());
}

std::string Metrics::scrape(const config::Config& config, const routing::Breakers& breakers) const {
  Gathered g;
  {
    std::lock_guard lock(mu_);
    for (const auto& w : workers_) {
      std::lock_guard worker(w->mu);
      w->gather(g);
    }
  }
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  auto requests = family("tollgate_requests_total",
                         "Exchanges ended, by route pattern, model, provider and status class",
                         MetricType::Counter);
  addValues(requests, g.requests);
  out.push_back(std::move(requests));
  auto duration = family("gen_ai_server_request_duration_seconds",
                         "GenAI server request duration: an inference exchange from its request "
                         "to its last byte",
                         MetricType::Histogram);
  addHistograms(duration, kDurationBounds, g.duration);
  out.push_back(std::move(duration));
  auto first_token = family("gen_ai_server_time_to_first_token_seconds",
                            "GenAI time to first token: from the request to the answering "
                            "upstream's first byte",
                            MetricType::Histogram);
  addHistograms(first_token, kFirstTokenBounds, g.first_token);
  out.push_back(std::move(first_token));
  auto tokens = family("gen_ai_client_token_usage",
                       "GenAI tokens used per exchange, by token type (input, output)",
                       MetricType::Histogram);
  addHistograms(tokens, kTokenBounds, g.tokens);
  out.push_back(std::move(tokens));
  auto operation =
      family("gen_ai_client_operation_duration_seconds",
             "GenAI client operation duration: one upstream attempt", MetricType::Histogram);
  addHistograms(operation, kDurationBounds, g.operation);
  out.push_back(std::move(operation));
  auto attempts = family("tollgate_upstream_attempts_total",
                         "Upstream attempts, retries and fallbacks included", MetricType::Counter);
  addValues(attempts, g.attempts);
  out.push_back(std::move(attempts));
  auto retries = family("tollgate_upstream_retries_total",
                        "Upstream attempts after their exchange's first: retries and fallbacks",
                        MetricType::Counter);
  addValues(retries, g.retries);
  out.push_back(std::move(retries));
  auto failures =
      family("tollgate_upstream_failures_total",
             "Upstream attempts that failed, by the error catalogue's code", MetricType::Counter);
  addValues(failures, g.failures);
  out.push_back(std::move(failures));
  auto overhead = family("tollgate_gateway_overhead_seconds",
                         "Time an exchange spent in the gateway, outside its upstream calls",
                         MetricType::Histogram);
  addHistograms(overhead, kOverheadBounds, g.overhead);
  out.push_back(std::move(overhead));
  auto cache =
      family("tollgate_cache_lookups_total",
             "Inference cache lookups, by outcome (hit, miss, partial)", MetricType::Counter);
  for (std::size_t i = 0; i < kCacheOutcomes.size(); ++i) {
    addValue(cache, {{"outcome", std::string(kCacheOutcomes[i])}}, static_cast<double>(g.cache[i]));
  }
  out.push_back(std::move(cache));
  auto served = family("tollgate_cache_served_bytes_total",
                       "Bytes sent to clients in answers from the inference cache (its hits)",
                       MetricType::Counter);
  addValue(served, {}, static_cast<double>(g.cache_bytes));
  out.push_back(std::move(served));
  if (cache_ != nullptr) {
    auto memory = family("tollgate_cache_memory_bytes",
                         "What the inference cache's in-memory front holds", MetricType::Gauge);
    addValue(memory, {}, static_cast<double>(cache_->memoryBytes()));
    out.push_back(std::move(memory));
  }
  auto keys = family("tollgate_idempotency_keys_total",
                     "Requests with an Idempotency-Key, by outcome (claimed, replayed, not_kept, "
                     "conflict)",
                     MetricType::Counter);
  for (std::size_t i = 0; i < kKeyOutcomes.size(); ++i) {
    addValue(keys, {{"outcome", std::string(kKeyOutcomes[i])}}, static_cast<double>(g.keys[i]));
  }
  out.push_back(std::move(keys));
  auto connections =
      family("tollgate_open_connections", "Client connections open", MetricType::Gauge);
  addValue(connections, {}, static_cast<double>(g.connections));
  out.push_back(std::move(connections));
  auto streams = family("tollgate_open_streams", "Streamed answers being sent", MetricType::Gauge);
  addValue(streams, {}, static_cast<double>(g.streams));
  out.push_back(std::move(streams));
  auto breaker = family("tollgate_circuit_breaker_state",
                        "Each provider's circuit breaker: 1 for its state, 0 for the others",
                        MetricType::Gauge);
  const auto now = routing::CircuitBreaker::Clock::now();
  for (const config::Model& m : config.models) {
    for (const config::Provider& p : m.providers) {
      const auto state = breakers.of(m, p)->snapshot(now).state;
      for (const auto s : kBreakerStates) {
        addValue(breaker,
                 {{"model", m.id}, {"provider", p.name}, {"state", std::string(stateName(s))}},
                 s == state ? 1 : 0);
      }
    }
  }
  out.push_back(std::move(breaker));
  auto build = family("tollgate_build_info",
                      "What is serving: the release, the commit it was built from and the "
                      "configuration's hash (1)",
                      MetricType::Gauge);
  addValue(build,
           {{"version", std::string(build::version())},
            {"commit", std::string(build::commit())},
            {"config", config.hash}},
           1);
  out.push_back(std::move(build));
  if (ledger_ != nullptr) {
    const billing::Ledger::InFlight held = ledger_->inFlight();
    auto holds =
        family("tollgate_holds_in_flight",
               "Requests holding part of their team's balance, not yet settled", MetricType::Gauge);
    addValue(holds, {}, static_cast<double>(held.holds));
    out.push_back(std::move(holds));
    auto amount =
        family("tollgate_held_usd", "What the holds in flight hold, in USD", MetricType::Gauge);
    addValue(amount, {}, usdFromPico(held.amount));
    out.push_back(std::move(amount));
  }
  if (accounts_ != nullptr) {
    const accounts::AccountService::SignIns in = accounts_->signIns();
    auto sign_ins = family("tollgate_console_sign_ins_total",
                           "Console sign-ins, by outcome (succeeded, failed)", MetricType::Counter);
    addValue(sign_ins, {{"outcome", "succeeded"}}, static_cast<double>(in.succeeded));
    addValue(sign_ins, {{"outcome", "failed"}}, static_cast<double>(in.failed));
    out.push_back(std::move(sign_ins));
  }
  for (auto& f : money_.collect()) {
    out.push_back(std::move(f));
  }
  std::ostringstream text;
  prometheus::TextSerializer().Serialize(text, out);
  return text.str();
}

}  // namespace tollgate::telemetry
