// Gemini's usageMetadata as our usage: thinking is output (billed at the output price), cached
// content is part of the prompt, and the tokens of tool-use prompts are added to the prompt.
// Every count is untrusted input.

#include "core/json.hpp"
#include "providers/gemini/gemini.hpp"

namespace tollgate::providers::gemini {

std::optional<openai::Usage> readUsage(const rapidjson::Value& metadata) {
  if (!metadata.IsObject()) {
    return std::nullopt;
  }
  bool untrusted = false;
  // A count absent or null is 0 (Gemini leaves out the ones that are); one that is not a
  // count makes the usage untrusted.
  const auto count = [&](std::string_view name) -> std::int64_t {
    const rapidjson::Value* v = json::member(metadata, name);
    if (v == nullptr || v->IsNull()) {
      return 0;
    }
    const auto n = json::countMember(metadata, name);
    untrusted = untrusted || !n;
    return n.value_or(0);
  };
  const rapidjson::Value* prompt = json::member(metadata, "promptTokenCount");
  const std::int64_t prompt_tokens = count("promptTokenCount");
  const std::int64_t tool_prompt = count("toolUsePromptTokenCount");
  const std::int64_t cached = count("cachedContentTokenCount");
  const std::int64_t candidates = count("candidatesTokenCount");
  const std::int64_t thoughts = count("thoughtsTokenCount");
  if (untrusted || prompt == nullptr || prompt->IsNull() || cached > prompt_tokens) {
    return std::nullopt;
  }
  openai::Usage u;
  if (__builtin_add_overflow(prompt_tokens, tool_prompt, &u.prompt_tokens) ||
      __builtin_add_overflow(candidates, thoughts, &u.completion_tokens)) {
    return std::nullopt;
  }
  u.cached_tokens = cached;
  u.reasoning_tokens = thoughts;
  u.prompt_details = true;
  u.completion_details = true;
  return u;
}

}  // namespace tollgate::providers::gemini
