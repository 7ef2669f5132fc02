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

[models.echo_embedding]
display_name = "Echo embeddings (built-in): vectors derived from the text"
endpoint = "embedding"
max_input_tokens = 8192
output_modalities = ["embedding"]
routing = ["local"]

[models.echo_embedding.providers.local]
type = "dummy"

[models.echo_rerank]
display_name = "Echo rerank (built-in): scores by shared words"
endpoint = "rerank"
output_modalities = ["score"]
routing = ["local"]

[models.echo_rerank.providers.local]
type = "dummy"

[models.echo_transcription]
display_name = "Echo transcription (built-in): describes the audio it got"
endpoint = "transcription"
input_modalities = ["audio"]
routing = ["local"]

[models.echo_transcription.providers.local]
type = "dummy"
)toml";

}  // namespace

Config defaultConfig() { return parseConfig(kDefaultToml, "<embedded default>"); }

}  // namespace tollgate::config
