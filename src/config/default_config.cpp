#include "config/config.hpp"

namespace tollgate::config {
namespace {

// The embedded default, written as a user would write it, so it passes the same validation.
constexpr std::string_view kDefaultToml = R"toml(
[gateway]
listen = "127.0.0.1:8080"
auth = "required"

[models.echo]
display_name = "Echo (built-in)"
owned_by = "tollgate"
max_input_tokens = 8192
max_output_tokens = 8192
routing = ["local"]

[models.echo.providers.local]
type = "dummy"
)toml";

}  // namespace

Config defaultConfig() { return parseConfig(kDefaultToml, "<embedded default>"); }

}  // namespace tollgate::config
