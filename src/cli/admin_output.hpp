// What `tollgate admin` prints the same way everywhere: names as stored with invisible characters
// made visible, times, amounts and optional text as JSON members, and the gateways that did not
// confirm a change in time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "accounts/accounts.hpp"
#include "accounts/records_json.hpp"
#include "core/money.hpp"

namespace tollgate::json {
class Writer;
}  // namespace tollgate::json

namespace tollgate::cli::admin {

/// Names and emails are shown as they are stored, with what would not show as itself escaped
/// (a control or format character as `\u202E`, a byte that is not UTF-8 as `\xNN`).
std::string shown(const std::string& s);

// Times, amounts and optional text as JSON members, as the console's API writes them too.
using accounts::textField;
using accounts::timeField;
using accounts::usdField;
/// The document written so far, on a stdout line of its own.
void printJson(json::Writer& w);

/// A warning on stderr naming each gateway fenced rather than confirmed when the change returned.
void reportLagging(const accounts::Propagation& p);

}  // namespace tollgate::cli::admin
