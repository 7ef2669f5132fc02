#include "providers/adapter.hpp"
#include "providers/anthropic.hpp"
#include "providers/dummy.hpp"
#include "providers/openai_compatible.hpp"

namespace tollgate::providers {

const Registry& builtinAdapters() {
  static const Registry registry = [] {
    Registry r;
    r.add(config::ProviderType::OpenAI, openAiAdapter());
    r.add(config::ProviderType::Anthropic, anthropic::anthropicAdapter());
    r.add(config::ProviderType::Dummy, dummyAdapter());
    return r;
  }();
  return registry;
}

}  // namespace tollgate::providers
