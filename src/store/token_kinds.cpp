#include "store/token_kinds.hpp"

#include "store/cache_store.hpp"

namespace tollgate::store {

TokenKinds kindsOf(const usage::Counts& u) {
  if (!usage::consistent(u)) {
    return {};
  }
  return {u.cached_tokens,       u.cache_write_tokens, u.cache_write_1h_tokens,
          u.audio_prompt_tokens, u.reasoning_tokens,   u.audio_completion_tokens};
}

usage::Counts countsOf(const CacheEntry& e) {
  usage::Counts c = usage::of(e.prompt_tokens, e.completion_tokens);
  c.cached_tokens = e.kinds.cached_tokens;
  c.cache_write_tokens = e.kinds.cache_write_tokens;
  c.cache_write_1h_tokens = e.kinds.cache_write_1h_tokens;
  c.audio_prompt_tokens = e.kinds.audio_prompt_tokens;
  c.reasoning_tokens = e.kinds.reasoning_tokens;
  c.audio_completion_tokens = e.kinds.audio_completion_tokens;
  return c;
}

std::string kindColumns(std::string_view prefix) {
  std::string out;
  for (const auto& [name, field] : kTokenKinds) {
    out += ", ";
    out += prefix;
    out += name;
  }
  return out;
}

std::string kindPlaceholders(std::size_t first) {
  std::string out;
  for (std::size_t i = 0; i < kTokenKinds.size(); ++i) {
    out += ", $" + std::to_string(first + i);
  }
  return out;
}

TokenKinds readKinds(const Row& r, std::size_t first) {
  TokenKinds k;
  for (const auto& [name, field] : kTokenKinds) {
    k.*field = r.integer(first++);
  }
  return k;
}

void appendKinds(const TokenKinds& k, std::vector<Param>& params) {
  for (const auto& [name, field] : kTokenKinds) {
    params.emplace_back(k.*field);
  }
}

}  // namespace tollgate::store
