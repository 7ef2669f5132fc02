// The config loader on arbitrary TOML. Invariants: a bad file is a ConfigError (which
// check-config and serve print as FILE: KEY: reason), nothing else escapes, nothing crashes; a
// loaded config has well-formed model ids, sorted and unique, each with a provider.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate::config;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const EnvLookup env = [](const std::string&) -> std::optional<std::string> {
    return "sk-fuzz-0123456789ab";  // 20 characters.
  };
  try {
    const Config c = parseConfig(text, "fuzz.toml", env);
    for (std::size_t i = 0; i < c.models.size(); ++i) {
      const Model& m = c.models[i];
      if (m.providers.empty() || !isModelId(m.id) || (i > 0 && !(c.models[i - 1].id < m.id)) ||
          c.findModel(m.id) != &m) {
        std::abort();
      }
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
