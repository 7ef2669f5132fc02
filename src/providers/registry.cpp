#include "providers/adapter.hpp"
#include "providers/anthropic/anthropic.hpp"
#include "providers/azure/azure.hpp"
#include "providers/bedrock/bedrock.hpp"
#include "providers/dummy/dummy.hpp"
#include "providers/gemini/gemini.hpp"
#include "providers/openai/compatible.hpp"

namespace tollgate::providers {

const Registry& builtinAdapters() {
  static const Registry registry = [] {
    Registry r;
    r.add(config::ProviderType::OpenAI, openAiAdapter());
    r.add(config::ProviderType::Anthropic, anthropic::anthropicAdapter());
    r.add(config::ProviderType::Azure, azure::azureAdapter());
    r.add(config::ProviderType::Bedrock, bedrock::bedrockAdapter());
    r.add(config::ProviderType::Gemini, gemini::geminiAdapter());
    r.add(config::ProviderType::Dummy, dummyAdapter());
    return r;
  }();
  return registry;
}

}  // namespace tollgate::providers
