// The config loader on arbitrary TOML. Invariant: a bad file is a ConfigError (which check-config
// and serve print as FILE: KEY: reason); nothing else escapes, nothing crashes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tollgate::config;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const EnvLookup env = [](const std::string&) -> std::optional<std::string> {
    return "sk-fuzz-0123456789abcd";
  };
  try {
    const Config c = parseConfig(text, "fuzz.toml", env);
    for (const Model& m : c.models) {
      if (m.providers.empty() || !isModelId(m.id)) {
        std::abort();
      }
    }
  } catch (const ConfigError&) {
  }
  return 0;
}
