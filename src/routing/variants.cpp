#include "routing/variants.hpp"

#include <algorithm>
#include <cstdint>

namespace tollgate::routing {
namespace {

/// FNV-1a over the function's name and the episode id: the seed of the draw.
std::uint64_t seedOf(std::string_view function, std::string_view episode) {
  constexpr std::uint64_t kOffset = 14695981039346656037ULL;
  constexpr std::uint64_t kPrime = 1099511628211ULL;
  std::uint64_t h = kOffset;
  const auto mix = [&](std::string_view s) {
    for (const char c : s) {
      h = (h ^ static_cast<unsigned char>(c)) * kPrime;
    }
  };
  mix(function);
  h = (h ^ 0xffU) * kPrime;  // A separator no name or id contains.
  mix(episode);
  return h;
}

/// SplitMix64: a stream of well-mixed numbers from one seed.
std::uint64_t next(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A number in [0, 1) from 53 random bits.
double unit(std::uint64_t& state) {
  constexpr int kMantissaBits = 53;
  return static_cast<double>(next(state) >> (64 - kMantissaBits)) /
         static_cast<double>(1ULL << kMantissaBits);
}

}  // namespace

std::vector<const config::Variant*> variantOrder(const config::Function& function,
                                                 std::string_view episode_id) {
  std::vector<const config::Variant*> pool;
  for (const config::Variant& v : function.variants) {
    if (v.weight > 0) {
      pool.push_back(&v);
    }
  }
  std::vector<const config::Variant*> order;
  order.reserve(function.variants.size());
  std::uint64_t state = seedOf(function.name, episode_id);
  while (!pool.empty()) {
    double total = 0;
    for (const config::Variant* v : pool) {
      total += v->weight;
    }
    double point = unit(state) * total;
    auto chosen = pool.end() - 1;  // Rounding can leave the point past the last weight.
    for (auto it = pool.begin(); it != pool.end(); ++it) {
      if (point < (*it)->weight) {
        chosen = it;
        break;
      }
      point -= (*it)->weight;
    }
    order.push_back(*chosen);
    pool.erase(chosen);
  }
  for (const std::string& name : function.fallback_variants) {
    const config::Variant* v = function.findVariant(name);
    if (v != nullptr && std::find(order.begin(), order.end(), v) == order.end()) {
      order.push_back(v);
    }
  }
  return order;
}

}  // namespace tollgate::routing
