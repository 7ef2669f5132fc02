// Language codes: ISO 639-1, the two-letter codes OpenAI's transcription `language` takes.
#pragma once

#include <string_view>

namespace tollgate {

/// True for a current ISO 639-1 code, lowercase (e.g. "en", "de", "zh").
bool isIso639Code(std::string_view code);

}  // namespace tollgate
