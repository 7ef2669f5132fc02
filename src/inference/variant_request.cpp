#include "inference/variant_request.hpp"

#include <string_view>

namespace tollgate::inference {
namespace {

using rapidjson::Value;

/// Sets `name` to `value` unless the client sent a non-null value for it.
template <class T>
void setDefault(rapidjson::Document& body, const char* name, const std::optional<T>& value) {
  if (!value) {
    return;
  }
  auto& alloc = body.GetAllocator();
  const auto it = body.FindMember(name);
  if (it == body.MemberEnd()) {
    body.AddMember(Value(rapidjson::StringRef(name)), Value(*value), alloc);
  } else if (it->value.IsNull()) {
    it->value = Value(*value);
  }
}

/// Puts `{"role":"system","content":prompt}` before the client's messages.
void prependSystem(rapidjson::Document& body, const std::string& prompt) {
  auto& alloc = body.GetAllocator();
  Value system(rapidjson::kObjectType);
  system.AddMember("role", "system", alloc);
  system.AddMember("content",
                   Value(prompt.data(), static_cast<rapidjson::SizeType>(prompt.size()), alloc),
                   alloc);
  Value messages(rapidjson::kArrayType);
  messages.PushBack(system, alloc);
  Value& old = body["messages"];
  for (Value& m : old.GetArray()) {
    messages.PushBack(m, alloc);  // Moved: the copy is this request's own.
  }
  old = messages;
}

}  // namespace

std::optional<std::int64_t> outputLimit(const openai::ChatRequest& request,
                                        const config::Variant* variant) {
  if (request.max_completion_tokens || variant == nullptr) {
    return request.max_completion_tokens;
  }
  return variant->max_tokens;
}

std::size_t variantPromptBytes(const config::Variant* variant) {
  // The message prependSystem writes, around the prompt; escaping only makes the prompt longer
  // in JSON, never adds tokens to it.
  constexpr std::string_view kSystemMessage = R"({"role":"system","content":""},)";
  if (variant == nullptr || variant->system_prompt.empty()) {
    return 0;
  }
  return variant->system_prompt.size() + kSystemMessage.size();
}

openai::ChatRequest withVariant(const openai::ChatRequest& request,
                                const config::Variant& variant) {
  openai::ChatRequest r;
  r.body.CopyFrom(request.body, r.body.GetAllocator());
  r.model = request.model;
  r.stream = request.stream;
  r.include_usage = request.include_usage;
  r.max_completion_tokens = outputLimit(request, &variant);
  r.service_tier = request.service_tier;
  r.episode_id = request.episode_id;
  r.variant_name = request.variant_name;
  r.dryrun = request.dryrun;
  r.tags = request.tags;
  r.media_parts = request.media_parts;
  r.include_raw_usage = request.include_raw_usage;
  r.include_raw_response = request.include_raw_response;
  setDefault(r.body, "temperature", variant.temperature);
  setDefault(r.body, "top_p", variant.top_p);
  setDefault(r.body, "presence_penalty", variant.presence_penalty);
  setDefault(r.body, "frequency_penalty", variant.frequency_penalty);
  setDefault(r.body, "seed", variant.seed);
  if (!variant.system_prompt.empty()) {
    prependSystem(r.body, variant.system_prompt);
  }
  return r;
}

}  // namespace tollgate::inference
