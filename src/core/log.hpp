// The gateway's own stderr lines, apart from the access log (start-up, warnings, store failures,
// reloads): as text, `tollgate: MESSAGE`, by default, or with [log] format = "json" as one JSON
// object a line ({"ts_ms", "level", "msg"}), so that a log pipeline can parse every line. Each
// line leaves in one write. Never give it a secret.
#pragma once

#include <string_view>

namespace tollgate::log {

enum class Level { Info, Warn, Error };

/// Writes the lines that follow as JSON objects (true) or as text. Set at start-up, before the
/// threads that log begin.
void useJson(bool json);

/// One line: `tollgate: ` and `msg` as text; {"ts_ms","level","msg"} as JSON.
void line(Level level, std::string_view msg);

/// One line of an event the server sees beside the exchanges (a failed connection handler): a
/// JSON object {"level","msg","detail"} in either format (with "ts_ms" first as JSON), `detail`
/// made printable.
void event(Level level, std::string_view msg, std::string_view detail);

}  // namespace tollgate::log
