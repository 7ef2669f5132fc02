#include "routing/breaker.hpp"

#include "core/json.hpp"

namespace tollgate::routing {

void CircuitBreaker::setPolicy(config::BreakerPolicy policy) {
  const std::lock_guard lock(mutex_);
  policy_ = policy;
}

bool CircuitBreaker::allow(Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  switch (state_) {
    case State::Closed:
      return true;
    case State::Open:
      if (now < open_until_) {
        return false;
      }
      state_ = State::HalfOpen;
      probing_ = true;
      return true;
    case State::HalfOpen:
      if (probing_) {
        return false;
      }
      probing_ = true;
      return true;
  }
  return true;
}

void CircuitBreaker::succeeded() {
  const std::lock_guard lock(mutex_);
  state_ = State::Closed;
  failures_ = 0;
  probing_ = false;
}

void CircuitBreaker::failed(Clock::time_point now) {
  const std::lock_guard lock(mutex_);
  ++failures_;
  const bool trip = state_ == State::HalfOpen || (state_ == State::Closed && policy_.failures > 0 &&
                                                  failures_ >= policy_.failures);
  if (trip) {
    state_ = State::Open;
    open_until_ = now + policy_.cooldown;
    probing_ = false;
  }
}

void CircuitBreaker::abandoned() {
  const std::lock_guard lock(mutex_);
  probing_ = false;
}

CircuitBreaker::Snapshot CircuitBreaker::snapshot(Clock::time_point now) const {
  const std::lock_guard lock(mutex_);
  Snapshot s{state_, failures_, Clock::duration{0}};
  if (state_ == State::Open && now < open_until_) {
    s.open_for = open_until_ - now;
  }
  return s;
}

std::string_view stateName(CircuitBreaker::State s) {
  switch (s) {
    case CircuitBreaker::State::Closed:
      return "closed";
    case CircuitBreaker::State::Open:
      return "open";
    case CircuitBreaker::State::HalfOpen:
      return "half_open";
  }
  return "closed";
}

Breakers::Breakers(const config::Config& config) { adopt(config); }

void Breakers::adopt(const config::Config& config) {
  decltype(breakers_) next;
  const std::unique_lock lock(mutex_);
  for (const config::Model& m : config.models) {
    ByProvider& providers = next[m.id];
    const auto model = breakers_.find(m.id);
    for (const config::Provider& p : m.providers) {
      Entry e{p.type, p.api_base, p.model, nullptr};
      const Entry* kept = nullptr;
      if (model != breakers_.end()) {
        const auto found = model->second.find(p.name);
        kept = found != model->second.end() && found->second.reaches(p) ? &found->second : nullptr;
      }
      if (kept != nullptr) {
        e.breaker = kept->breaker;
        e.breaker->setPolicy(p.breaker);
      } else {
        e.breaker = std::make_shared<CircuitBreaker>(p.breaker);
      }
      providers.emplace(p.name, std::move(e));
    }
  }
  breakers_ = std::move(next);
}

std::shared_ptr<CircuitBreaker> Breakers::of(const config::Model& model,
                                             const config::Provider& provider) const {
  {
    const std::shared_lock lock(mutex_);
    const auto m = breakers_.find(model.id);
    if (m != breakers_.end()) {
      const auto found = m->second.find(provider.name);
      if (found != m->second.end() && found->second.reaches(provider)) {
        return found->second.breaker;
      }
    }
  }
  // A request pinned to a configuration a reload replaced, whose provider changed since: a
  // breaker of its own, as the old upstream's history is not the new one's.
  return std::make_shared<CircuitBreaker>(provider.breaker);
}

std::string Breakers::statusJson(const config::Config& config,
                                 CircuitBreaker::Clock::time_point now) const {
  json::Writer w;
  w.startArray();
  for (const config::Model& m : config.models) {
    for (const config::Provider& p : m.providers) {
      const auto s = of(m, p)->snapshot(now);
      w.startObject();
      w.field("model", m.id);
      w.field("provider", p.name);
      w.field("state", stateName(s.state));
      w.field("consecutive_failures", s.consecutive_failures);
      w.field("open_for_ms",
              static_cast<std::int64_t>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(s.open_for).count()));
      w.endObject();
    }
  }
  w.endArray();
  return w.take();
}

}  // namespace tollgate::routing
